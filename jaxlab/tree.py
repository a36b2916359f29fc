"""jaxlab.tree: jax.tree's short names for the pytree utilities in tree_util."""
from jaxlab.tree_util import tree_all as all  # noqa: A004,F401
from jaxlab.tree_util import tree_flatten as flatten  # noqa: F401
from jaxlab.tree_util import tree_leaves as leaves  # noqa: F401
from jaxlab.tree_util import tree_map as map  # noqa: A004,F401
from jaxlab.tree_util import tree_reduce as reduce  # noqa: F401
from jaxlab.tree_util import tree_structure as structure  # noqa: F401
from jaxlab.tree_util import tree_transpose as transpose  # noqa: F401
from jaxlab.tree_util import tree_unflatten as unflatten  # noqa: F401
# the key-path and broadcasting helpers (jax.tree's newer names)
from jaxlab.tree_paths import static  # noqa: F401
from jaxlab.tree_paths import tree_flatten_with_path as flatten_with_path  # noqa: F401
from jaxlab.tree_paths import tree_leaves_with_path as leaves_with_path  # noqa: F401
from jaxlab.tree_paths import tree_map_with_path as map_with_path  # noqa: F401
from jaxlab.tree_util import tree_broadcast as broadcast  # noqa: F401
from jaxlab.tree_util import tree_reduce_associative as reduce_associative  # noqa: F401

__all__ = ["all", "flatten", "leaves", "map", "reduce", "structure", "transpose", "unflatten",
           "broadcast", "flatten_with_path", "leaves_with_path", "map_with_path",
           "reduce_associative", "static"]
