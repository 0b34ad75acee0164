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

from frazil.expressions.base import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    Not,
    Or,
    fold,
)
from frazil.expressions.binding import bind
from frazil.expressions.json import from_json, to_json
from frazil.expressions.literals import Literal, literal
from frazil.expressions.parser import parse
from frazil.expressions.predicates import (
    BoundEqualTo,
    BoundGreaterThan,
    BoundGreaterThanOrEqual,
    BoundIn,
    BoundIsNaN,
    BoundIsNull,
    BoundLessThan,
    BoundLessThanOrEqual,
    BoundLiteralPredicate,
    BoundNotEqualTo,
    BoundNotIn,
    BoundNotNaN,
    BoundNotNull,
    BoundNotStartsWith,
    BoundPredicate,
    BoundSetPredicate,
    BoundStartsWith,
    BoundUnaryPredicate,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    LiteralPredicate,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    SetPredicate,
    StartsWith,
    UnaryPredicate,
    UnboundPredicate,
)
from frazil.expressions.terms import (
    BoundReference,
    BoundTerm,
    BoundTransform,
    Reference,
    Term,
    UnboundTerm,
    UnboundTransform,
)

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "BoundEqualTo",
    "BoundGreaterThan",
    "BoundGreaterThanOrEqual",
    "BoundIn",
    "BoundIsNaN",
    "BoundIsNull",
    "BoundLessThan",
    "BoundLessThanOrEqual",
    "BoundLiteralPredicate",
    "BoundNotEqualTo",
    "BoundNotIn",
    "BoundNotNaN",
    "BoundNotNull",
    "BoundNotStartsWith",
    "BoundPredicate",
    "BoundReference",
    "BoundSetPredicate",
    "BoundStartsWith",
    "BoundTerm",
    "BoundTransform",
    "BoundUnaryPredicate",
    "EqualTo",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "Literal",
    "LiteralPredicate",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "Or",
    "Reference",
    "SetPredicate",
    "StartsWith",
    "Term",
    "UnaryPredicate",
    "UnboundPredicate",
    "UnboundTerm",
    "UnboundTransform",
    "bind",
    "fold",
    "from_json",
    "literal",
    "parse",
    "to_json",
]
