"""Row filters: expression trees, string filters, JSON (expressions spec) and binding.

>>> from frazil.expressions import parse, to_json
>>> e = parse("id > 5 AND category IN ('a', 'b')")
>>> e.left
GreaterThan(term=Reference(name='id'), literal=literal(5))
>>> str(e)
"id > 5 AND category IN ('a', 'b')"
>>> to_json(e)["left"]
{'type': 'gt', 'left': {'type': 'reference', 'name': 'id'}, 'right': 5}

Unbound expressions name fields; :func:`bind` resolves them against a schema (field ids, literals
converted to the column types), giving the bound form that the native planner evaluates.
"""

from __future__ import annotations

# The public names of each module, re-exported (each module's __all__ says which).
from frazil.expressions import base as _base
from frazil.expressions import predicates as _predicates
from frazil.expressions import terms as _terms
from frazil.expressions.base import *  # noqa: F403
from frazil.expressions.binding import bind
from frazil.expressions.json import from_json, to_json
from frazil.expressions.literals import Literal, literal
from frazil.expressions.parser import as_filter, parse
from frazil.expressions.predicates import *  # noqa: F403
from frazil.expressions.terms import *  # noqa: F403

__all__ = ["Literal", "as_filter", "bind", "from_json", "literal", "parse", "to_json"]
__all__ += _base.__all__
__all__ += _predicates.__all__
__all__ += _terms.__all__
