r"""Compile a mechanism spec into a numeric-layer :class:`~numeric.mechanisms.base.Mechanism`.

:func:`compile_mechanism` turns a :class:`~derive.mechanism.DensityMechanism` or
:class:`~derive.mechanism.DiscreteMechanism` into an instance of a frozen dataclass created at run
time, a subclass of :class:`CompiledMechanism` (itself a numeric ``Mechanism``) with one float
field per declared parameter. ``numeric.compose``, the AEA (``numeric.aea_epsilon``), the GDP/CLT
methods (``numeric.epsilon(..., method="gdp")``) and spec files accept it like a built-in.

* ``_cumulants(order)`` returns the derived cumulants as floats: closed forms evaluated with
  mpmath at ``dps`` digits (precision raised until stable, so expressions that cancel still give
  full double accuracy), or values from mpmath quadrature; either way computed once per parameter
  point and cached. Provenance and identity checks are available from :meth:`~CompiledMechanism.
  derived`. Construction evaluates the cumulants to ``order`` eagerly, so bad parameters, failed
  identities (K_X(1) = 0, K_Y(-1) = 0, kappa_1(X) = -KL) and infinite PLLRs fail at once.
* ``symmetric`` (Y =d -X, so one pair order suffices; docs/math.md section 1) is detected per
  instance from the cumulants: kappa_k(Y) = (-1)^k kappa_k(X) for k = 1..order to a relative 1e-9.
  Agreement of finitely many cumulants is evidence, not proof; a false positive would make the
  accountants skip the (then nearly identical) swapped order.
* ``lattice`` is True when the PLLR law has atoms (discrete pmfs; L constant on a segment, as for
  Laplace).
* ``cgf_batch(t, n)`` is the CGF K_Y(t) of the PLLR under Q and its derivatives, computed
  numerically (:mod:`derive.cgf`: exact sums for pmfs, log-space Gauss-Legendre quadrature with a
  convergence check for densities; ``NotApplicable`` where that is not reliable); ``pllr_sup()``
  and ``pllr_inf()`` the essential range of L (+-inf where derive cannot establish it).
* ``exact_family()`` is ``("gaussian", kappa_2)`` when X is exactly normal (L affine, log p
  quadratic on the whole line), so Gaussian-type pairs compose exactly (GDP Cor. 3.3).
* The certified lattice method (:mod:`certify.lattice`) accepts compiled mechanisms whose PLLR
  law can be enclosed (finite pmfs; densities with a PLLR proven or declared monotone on each
  segment and closed-form masses): the first :func:`mechanism_class` call imports
  :mod:`derive.lattice` and registers their lattice step
  (:func:`derive.lattice.register_lattice_steps`) when python-flint (the ``certify`` extra) is
  installed. derive itself needs only sympy.

:func:`register_compiled` adds the class to :data:`numeric.mechanisms.base.MECHANISMS`, so spec
files (``type = "name"``) and ``edgeworth --spec`` accept it in the same process. The CLI's
``--mechanism`` form only has flags for ``sigma, scale, eps0, delta0, rate, sensitivity``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from numeric.mechanisms.base import Mechanism, PLLRCumulants, register_mechanism

from .cgf import cgf_batch as derived_cgf_batch
from .cgf import pllr_range
from .mechanism import DEFAULT_SYMBOLIC_TIMEOUT, MAX_ORDER, CumulantResult, MechanismSpec

__all__ = [
    "CompiledMechanism",
    "compile_mechanism",
    "is_symmetric",
    "mechanism_class",
    "register_compiled",
]

_SYMMETRY_RTOL = 1e-9
_CLASSES: dict[tuple, type] = {}
_LATTICE_HOOKED = False


def is_symmetric(result: CumulantResult, rtol: float = _SYMMETRY_RTOL) -> bool:
    r"""Whether the cumulants satisfy kappa_k(Y) = (-1)^k kappa_k(X) for every computed k.

    Each order is compared relative to max(|kappa_k(X)|, |kappa_k(Y)|, sigma^k), sigma^2 =
    kappa_2(X), so cumulants that vanish (Gaussian kappa_{>=3}) compare on their natural scale.

    Args:
        result: Cumulants from :meth:`derive.mechanism.MechanismSpec.cumulants`.
        rtol: Relative tolerance.

    Returns:
        True if the relation holds to ``rtol`` at every order.
    """
    x, y = result.floats()
    sigma = math.sqrt(abs(x[1])) if len(x) > 1 else abs(x[0])
    for k, (a, b) in enumerate(zip(x, y, strict=True), start=1):
        scale = max(abs(a), abs(b), sigma**k)
        if abs(b - (-1) ** k * a) > rtol * scale:
            return False
    return True


class CompiledMechanism(Mechanism):
    """Base of the mechanism classes created by :func:`mechanism_class`.

    Class attributes set per spec: ``spec``, ``derive_options`` (strategy, symbolic_timeout),
    ``compiled_order``, ``dps``, ``lattice``, ``gaussian``, and for finite pmfs
    ``cgf_closed_form`` and ``purely_atomic`` (numeric's CGF contract). ``symmetric`` is False
    on the class (both pair orders, the safe default) and set on each instance from its own
    cumulants.
    """

    spec: ClassVar[MechanismSpec]
    derive_options: ClassVar[dict[str, Any]]
    compiled_order: ClassVar[int] = 4
    dps: ClassVar[int] = 30
    gaussian: ClassVar[bool] = False
    symmetric: ClassVar[bool] = False
    lattice: ClassVar[bool] = False
    max_order: ClassVar[int | None] = MAX_ORDER

    def __post_init__(self) -> None:
        for prm in self.spec.params:
            object.__setattr__(self, prm.name, prm.check(getattr(self, prm.name)))
        res = self.derived(self.compiled_order)
        object.__setattr__(self, "symmetric", is_symmetric(res))

    @property
    def values(self) -> dict[str, float]:
        """The parameter values of this instance, by name."""
        return {prm.name: getattr(self, prm.name) for prm in self.spec.params}

    def derived(self, order: int | None = None) -> CumulantResult:
        """The derived cumulants at this instance's parameters, with provenance and checks.

        Args:
            order: Highest order (default: the compiled order).

        Returns:
            A :class:`~derive.mechanism.CumulantResult` (cached per parameter point).
        """
        order = self.compiled_order if order is None else order
        return self.spec.cumulants(order, self.values, dps=self.dps, **self.derive_options)

    def _cumulants(self, order: int) -> PLLRCumulants:
        res = self.derived(max(order, self.compiled_order))
        x, y = res.floats()
        return PLLRCumulants(x=x[:order], y=y[:order])

    def cgf_batch(self, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        r"""K_Y(t_i) = log E_Q e^{t_i Y} and D[i, j-1] = K_Y^{(j)}(t_i), j = 1..n (Y = L under
        Q), by numeric sums (pmfs) or Gauss-Legendre quadrature in log-space
        (:func:`derive.cgf.cgf_batch`).

        Args:
            t: Tilts (flattened), finite.
            n: Highest derivative, whole number >= 1.

        Returns:
            ``(K, D)`` of shapes (len(t),) and (len(t), n).

        Raises:
            ValueError: on a non-finite tilt or a bad ``n``.
            NotApplicable: for tilts where the integrals cannot be done reliably (e.g. E_Q
                e^{tY} diverges), naming them.
        """
        return derived_cgf_batch(self, t, n)

    def pllr_sup(self) -> float:
        """The essential supremum of L = log q/p: from derive's segmentation (atoms, limits at
        the ends of segments where L is proven monotone), +inf where it is not known."""
        return pllr_range(self)[1]

    def pllr_inf(self) -> float:
        """The essential infimum of L, likewise (-inf where it is not known)."""
        return pllr_range(self)[0]

    def exact_family(self) -> tuple[str, float] | None:
        """``("gaussian", kappa_2(X))`` when X is exactly normal, else None."""
        if self.gaussian:
            return ("gaussian", float(self._cumulants(2).x[1]))
        return None

    def describe(self) -> str:
        vals = ", ".join(f"{k}={v:g}" for k, v in self.values.items())
        return f"{type(self).__name__}({vals}) [derived from densities: {self.spec.name}]"


def _class_name(name: str) -> str:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", name) if p]
    out = "".join(p[:1].upper() + p[1:] for p in parts)
    if not out or not out.isidentifier():
        out = "Derived" + out if out and out[0].isdigit() else (out or "DerivedMechanism")
    return out


def _register_lattice_step() -> None:
    """Once per process, when python-flint is installed: import :mod:`derive.lattice` and let
    it register the lattice step of :class:`CompiledMechanism` (hence of every compiled class)
    with certify (:func:`derive.lattice.register_lattice_steps`, the one place that touches
    certify's registry). Without python-flint (no ``certify`` extra) compiled mechanisms work
    everywhere except in the lattice method."""
    global _LATTICE_HOOKED
    if _LATTICE_HOOKED:
        return
    _LATTICE_HOOKED = True
    if importlib.util.find_spec("flint") is not None:
        from .lattice import register_lattice_steps

        register_lattice_steps(CompiledMechanism)


def mechanism_class(spec: MechanismSpec, *, order: int = 4, dps: int = 30,
                    strategy: str = "auto",
                    symbolic_timeout: float | None = DEFAULT_SYMBOLIC_TIMEOUT,
                    class_name: str | None = None) -> type:
    """The (cached) numeric Mechanism class of a spec.

    Args:
        spec: A :class:`~derive.mechanism.DensityMechanism` or
            :class:`~derive.mechanism.DiscreteMechanism`.
        order: Cumulant order evaluated eagerly for every instance (4 covers AEA order 2).
        dps: Decimal digits of the mpmath evaluation.
        strategy: ``"auto"``, ``"symbolic"`` or ``"quadrature"`` (see
            :meth:`~derive.mechanism.MechanismSpec.derive`).
        symbolic_timeout: Seconds per sympy integral.
        class_name: Name of the class (default: CamelCase of ``spec.name``).

    Returns:
        A frozen-dataclass subclass of :class:`CompiledMechanism` whose fields are the
        parameters (those with defaults last).

    Raises:
        ValueError: on a non-spec or bad options.
    """
    if not isinstance(spec, MechanismSpec):
        raise ValueError(f"spec must be a DensityMechanism or DiscreteMechanism, got {spec!r}")
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= MAX_ORDER:
        raise ValueError(f"order must be an integer in [1, {MAX_ORDER}], got {order!r}")
    name = class_name or _class_name(spec.name)
    if not name.isidentifier():
        raise ValueError(f"class_name must be an identifier, got {name!r}")
    _register_lattice_step()
    key = (spec, order, dps, strategy, symbolic_timeout, name)
    cls = _CLASSES.get(key)
    if cls is not None:
        return cls
    spec.derive(order, strategy=strategy, symbolic_timeout=symbolic_timeout)  # fail early
    required = [(prm.name, float) for prm in spec.params if prm.default is None]
    optional = [(prm.name, float, dataclasses.field(default=prm.default))
                for prm in spec.params if prm.default is not None]
    doc = (f"{name}: the mechanism {spec.name!r} compiled from its densities by derive.\n\n"
           f"Parameters: {', '.join(spec.parameter_names) or '(none)'}. "
           f"{spec.description}")
    namespace = {
        "spec": spec,
        "derive_options": {"strategy": strategy, "symbolic_timeout": symbolic_timeout},
        "compiled_order": order,
        "dps": dps,
        "gaussian": spec.gaussian_pllr,
        "lattice": spec.has_atoms,
        # a finite pmf: the CGF is an exact finite sum (cheap at new tilts) of a purely atomic law
        "cgf_closed_form": spec.kind == "discrete",
        "purely_atomic": spec.kind == "discrete",
        "__doc__": doc,
        "__module__": __name__,
    }
    cls = dataclasses.make_dataclass(name, required + optional, bases=(CompiledMechanism,),
                                     frozen=True, namespace=namespace)
    _CLASSES[key] = cls
    return cls


def compile_mechanism(spec: MechanismSpec, *, order: int = 4, dps: int = 30,
                      strategy: str = "auto",
                      symbolic_timeout: float | None = DEFAULT_SYMBOLIC_TIMEOUT,
                      class_name: str | None = None, **param_values: float) -> Mechanism:
    """Compile ``spec`` and instantiate it at ``param_values``.

    Example::

        mech = compile_mechanism(LOGISTIC, mu=1.0)
        numeric.epsilon(numeric.compose([(mech, 100)]), 1e-5, "aea")

    Args:
        spec: The mechanism spec.
        order: Cumulant order evaluated eagerly.
        dps: Decimal digits of the mpmath evaluation.
        strategy: ``"auto"``, ``"symbolic"`` or ``"quadrature"``.
        symbolic_timeout: Seconds per sympy integral.
        class_name: Name of the generated class.
        **param_values: Parameter values by name (declared defaults fill the rest).

    Returns:
        An instance of the compiled class (a numeric ``Mechanism``).

    Raises:
        ValueError: on unknown or out-of-domain parameters, densities that are not normalized,
            or failed identity checks (:class:`~derive.mechanism.IdentityCheckError`).
    """
    cls = mechanism_class(spec, order=order, dps=dps, strategy=strategy,
                          symbolic_timeout=symbolic_timeout, class_name=class_name)
    vals = spec.parameter_values(param_values)
    return cls(**vals)


def register_compiled(name: str, spec: MechanismSpec, *, keys: Mapping[str, str] | None = None,
                      **options: Any) -> type:
    """Compile ``spec`` and register its class under ``name`` for spec files and the CLI.

    Args:
        name: Registry name (``type = "name"`` in a spec file, ``--mechanism name``).
        spec: The mechanism spec.
        keys: Map from spec/CLI key to parameter name (default: each parameter's own name).
        **options: Passed to :func:`mechanism_class`.

    Returns:
        The registered class.

    Raises:
        ValueError: if ``name`` is taken or ``keys`` names unknown parameters.
    """
    cls = mechanism_class(spec, **options)
    keys = dict(keys) if keys is not None else {p: p for p in spec.parameter_names}
    unknown = set(keys.values()) - set(spec.parameter_names)
    if unknown:
        raise ValueError(f"keys map to unknown parameter(s) {sorted(unknown)}")
    missing = [p for p in spec.parameter_names if p not in keys.values()]
    if any(prm.default is None for prm in spec.params if prm.name in missing):
        raise ValueError(f"keys must cover the parameters without default, missing {missing}")
    by_param = {v: k for k, v in keys.items()}
    required = tuple(by_param[prm.name] for prm in spec.params if prm.default is None)
    register_mechanism(name, keys, required)(cls)
    return cls
