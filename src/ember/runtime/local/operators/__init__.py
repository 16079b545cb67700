"""Local operators for the non-join physical nodes (importing a module registers its operators);
exchanges are in :mod:`ember.runtime.local.exchange`, joins in :mod:`ember.runtime.local.joins`."""

from ember.runtime.local.operators import aggregate, basic, limits, sort  # noqa: F401
