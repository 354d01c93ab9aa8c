"""Drop-in accountants for other DP libraries' interfaces (the estimate variants).

* :mod:`numeric.interop.dp_accounting` -- :class:`EstimatePrivacyAccountant` with Google
  dp_accounting's ``PrivacyAccountant`` surface (``compose``, ``get_epsilon``, ``get_delta``,
  ``supports``, ``ledger``), and the shared event translation (dp_accounting events -> toolkit
  mechanisms) that certify's :class:`certify.interop.dp_accounting.CertifiedPrivacyAccountant`
  builds on;
* :mod:`numeric.interop.opacus` -- :class:`EstimateAccountant` with Opacus's ``IAccountant``
  surface (``step``, ``get_epsilon``, ``history``, ``state_dict``).

These return **estimates** (method ``auto`` by default) and say so: they warn once per
instance and every number carries the warning. The certified drop-ins (guarantees) are in
:mod:`certify.interop`. Neither dp_accounting nor Opacus is required; when installed, the
accountants also subclass their ``PrivacyAccountant`` / ``IAccountant``. The submodules are
imported on demand (``import numeric.interop.dp_accounting``).
"""

__all__: list[str] = []
