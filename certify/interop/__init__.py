"""Certified drop-ins for other DP libraries' accountants.

* :mod:`certify.interop.dp_accounting` -- :class:`CertifiedPrivacyAccountant` (Google
  dp_accounting's ``PrivacyAccountant`` surface);
* :mod:`certify.interop.opacus` -- :class:`CertifiedAccountant` (Opacus's ``IAccountant``
  surface).

Their ``get_epsilon`` returns the certified upper end (a guarantee) and keeps the whole
enclosure in ``last_bound``. The estimate variants live in :mod:`numeric.interop`.
"""

__all__: list[str] = []
