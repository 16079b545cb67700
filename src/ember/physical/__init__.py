"""Physical plans: pure-data ``SparkPlan`` trees (:mod:`.nodes`) and their partitionings and
distributions (:mod:`.partitioning`).  The planner (:mod:`ember.planning`) builds them from
optimized logical plans; runtimes (:mod:`ember.runtime`) execute them."""

from ember.physical.nodes import *  # noqa: F401,F403
from ember.physical.partitioning import *  # noqa: F401,F403
