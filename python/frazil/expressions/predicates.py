"""Predicates: tests and comparisons of one term, unbound (by name) and bound (by field id).

Names and constructor shapes follow PyIceberg (``EqualTo(term, literal)``, ``In(term,
literals)``, ...); ``In`` with one value is ``EqualTo``, with none ``AlwaysFalse()`` (Java and
PyIceberg do the same). ``~p`` is the negated predicate (``~LessThan`` is
``GreaterThanOrEqual``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from frazil.exceptions import InvalidArgumentError
from frazil.expressions.base import AlwaysFalse, AlwaysTrue, BooleanExpression
from frazil.expressions.literals import Literal, literal
from frazil.expressions.terms import (
    BoundReference,
    BoundTerm,
    Term,
    UnboundTerm,
    _bound_term,
    _unbound_term,
)

# (The tables by operation, BOUND_BY_OP and the others, are for the package's own modules.)
__all__ = [
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
    "BoundSetPredicate",
    "BoundStartsWith",
    "BoundUnaryPredicate",
    "EqualTo",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "LiteralPredicate",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "SetPredicate",
    "StartsWith",
    "UnaryPredicate",
    "UnboundPredicate",
]

# ---------------------------------------------------------------------------------------------
# predicates

# JSON operation names (expressions spec, Appendix B) and their negations.
NEGATED_OP = {
    "is-null": "not-null",
    "not-null": "is-null",
    "is-nan": "not-nan",
    "not-nan": "is-nan",
    "lt": "gt-eq",
    "gt-eq": "lt",
    "gt": "lt-eq",
    "lt-eq": "gt",
    "eq": "not-eq",
    "not-eq": "eq",
    "starts-with": "not-starts-with",
    "not-starts-with": "starts-with",
    "in": "not-in",
    "not-in": "in",
}
# ``value op term`` read as ``term flipped-op value``.
FLIPPED_OP = {
    "lt": "gt",
    "gt": "lt",
    "lt-eq": "gt-eq",
    "gt-eq": "lt-eq",
    "eq": "eq",
    "not-eq": "not-eq",
}

UNBOUND_BY_OP: dict[str, type[UnboundPredicate]] = {}
BOUND_BY_OP: dict[str, type[BoundPredicate]] = {}

_UNARY_TEXT = {
    "is-null": "IS NULL",
    "not-null": "IS NOT NULL",
    "is-nan": "IS NAN",
    "not-nan": "IS NOT NAN",
}
_CMP_TEXT = {"lt": "<", "lt-eq": "<=", "gt": ">", "gt-eq": ">=", "eq": "=", "not-eq": "!="}


def _like_pattern(lit: Literal) -> str:
    prefix = str(lit.value).replace("\\", "\\\\").replace("%", "\\%")
    return "'" + (prefix + "%").replace("'", "''") + "'"


def _predicate_str(op: str, term: Term, lits: tuple[Literal, ...] | None) -> str:
    if op in _UNARY_TEXT:
        return f"{term} {_UNARY_TEXT[op]}"
    if op in _CMP_TEXT:
        return f"{term} {_CMP_TEXT[op]} {lits[0]}"  # type: ignore[index]
    if op == "starts-with":
        return f"{term} LIKE {_like_pattern(lits[0])}"  # type: ignore[index]
    if op == "not-starts-with":
        return f"{term} NOT LIKE {_like_pattern(lits[0])}"  # type: ignore[index]
    word = "IN" if op == "in" else "NOT IN"
    return f"{term} {word} ({', '.join(map(str, lits))})"  # type: ignore[arg-type]


class UnboundPredicate(BooleanExpression):
    """A test or comparison of a term by name."""

    __slots__ = ("term",)
    op: ClassVar[str] = ""
    _unbound: int = 1
    term: UnboundTerm

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.op:
            UNBOUND_BY_OP[cls.op] = cls


class BoundPredicate(BooleanExpression):
    """A test or comparison of a bound term (field id and type known)."""

    __slots__ = ("term",)
    op: ClassVar[str] = ""
    term: BoundTerm

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.op:
            BOUND_BY_OP[cls.op] = cls

    @property
    def ref(self) -> BoundReference:
        return self.term.ref


class _UnaryMixin:
    __slots__ = ()
    op: ClassVar[str]
    term: Term

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.term == self.term

    def __hash__(self) -> int:
        return hash((self.op, self.term))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(term={self.term!r})"

    def __str__(self) -> str:
        return _predicate_str(self.op, self.term, None)

    def __reduce__(self) -> Any:
        return (type(self), (self.term,))


class UnaryPredicate(_UnaryMixin, UnboundPredicate):
    __slots__ = ()
    term: UnboundTerm

    def __init__(self, term: str | UnboundTerm) -> None:
        self._set(term=_unbound_term(term))

    def negate(self) -> BooleanExpression:
        return UNBOUND_BY_OP[NEGATED_OP[self.op]](self.term)  # type: ignore[call-arg]


class BoundUnaryPredicate(_UnaryMixin, BoundPredicate):
    __slots__ = ()
    term: BoundTerm

    def __init__(self, term: BoundTerm) -> None:
        self._set(term=_bound_term(term))

    def negate(self) -> BooleanExpression:
        return BOUND_BY_OP[NEGATED_OP[self.op]](self.term)  # type: ignore[call-arg]


class _LiteralMixin:
    __slots__ = ()
    op: ClassVar[str]
    term: Term
    literal: Literal

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self) and other.term == self.term and other.literal == self.literal
        )

    def __hash__(self) -> int:
        return hash((self.op, self.term, self.literal))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(term={self.term!r}, literal={self.literal!r})"

    def __str__(self) -> str:
        return _predicate_str(self.op, self.term, (self.literal,))

    def __reduce__(self) -> Any:
        return (type(self), (self.term, self.literal))


class LiteralPredicate(_LiteralMixin, UnboundPredicate):
    """A comparison of a term with one literal (``<``, ``=``, starts-with, ...)."""

    __slots__ = ("literal",)
    term: UnboundTerm

    def __init__(self, term: str | UnboundTerm, literal: Any) -> None:
        self._set(term=_unbound_term(term), literal=_literal(literal))

    def negate(self) -> BooleanExpression:
        return UNBOUND_BY_OP[NEGATED_OP[self.op]](self.term, self.literal)  # type: ignore[call-arg]


class BoundLiteralPredicate(_LiteralMixin, BoundPredicate):
    __slots__ = ("literal",)
    term: BoundTerm

    def __init__(self, term: BoundTerm, literal: Literal) -> None:
        term = _bound_term(term)
        lit = _literal(literal)
        if lit.type != term.type:
            raise InvalidArgumentError(f"literal {lit!r} does not have the term's type {term.type}")
        self._set(term=term, literal=lit)

    def negate(self) -> BooleanExpression:
        return BOUND_BY_OP[NEGATED_OP[self.op]](self.term, self.literal)  # type: ignore[call-arg]


def _literal(value: Any) -> Literal:
    return literal(value)


def _literal_set(values: Any) -> tuple[Literal, ...]:
    if values is None or isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidArgumentError(f"expected an iterable of literal values, got {values!r}")
    out: dict[Literal, None] = {}  # a set that keeps the first-seen order, for stable JSON
    for v in values:
        out.setdefault(_literal(v), None)
    return tuple(out)


class _SetMixin:
    __slots__ = ()
    op: ClassVar[str]
    term: Term
    literals: tuple[Literal, ...]

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.term == self.term
            and frozenset(other.literals) == frozenset(self.literals)
        )

    def __hash__(self) -> int:
        return hash((self.op, self.term, frozenset(self.literals)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(term={self.term!r}, literals={self.literals!r})"

    def __str__(self) -> str:
        return _predicate_str(self.op, self.term, self.literals)

    def __reduce__(self) -> Any:
        return (type(self), (self.term, self.literals))

    @property
    def values(self) -> set[Any]:
        return {lit.value for lit in self.literals}


class SetPredicate(_SetMixin, UnboundPredicate):
    """``term IN (...)`` / ``NOT IN``; duplicates are dropped, order is kept for output."""

    __slots__ = ("literals",)
    term: UnboundTerm

    def __new__(cls, term: str | UnboundTerm, literals: Iterable[Any]) -> BooleanExpression:  # type: ignore[misc]
        lits = _literal_set(literals)
        if not lits:
            return AlwaysFalse() if cls.op == "in" else AlwaysTrue()
        if len(lits) == 1:
            single = EqualTo if cls.op == "in" else NotEqualTo
            return single(term, lits[0])
        self = super().__new__(cls)
        self._set(term=_unbound_term(term), literals=lits)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def negate(self) -> BooleanExpression:
        return UNBOUND_BY_OP[NEGATED_OP[self.op]](self.term, self.literals)  # type: ignore[call-arg]


class BoundSetPredicate(_SetMixin, BoundPredicate):
    __slots__ = ("literals",)
    term: BoundTerm

    def __new__(cls, term: BoundTerm, literals: Iterable[Any]) -> BooleanExpression:  # type: ignore[misc]
        term = _bound_term(term)
        lits = _literal_set(literals)
        for lit in lits:
            if lit.type != term.type:
                raise InvalidArgumentError(
                    f"literal {lit!r} does not have the term's type {term.type}"
                )
        if not lits:
            return AlwaysFalse() if cls.op == "in" else AlwaysTrue()
        if len(lits) == 1:
            single = BoundEqualTo if cls.op == "in" else BoundNotEqualTo
            return single(term, lits[0])
        self = super().__new__(cls)
        self._set(term=term, literals=lits)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def negate(self) -> BooleanExpression:
        return BOUND_BY_OP[NEGATED_OP[self.op]](self.term, self.literals)  # type: ignore[call-arg]


# -- unbound predicates


class IsNull(UnaryPredicate):
    __slots__ = ()
    op = "is-null"


class NotNull(UnaryPredicate):
    __slots__ = ()
    op = "not-null"


class IsNaN(UnaryPredicate):
    __slots__ = ()
    op = "is-nan"


class NotNaN(UnaryPredicate):
    __slots__ = ()
    op = "not-nan"


class LessThan(LiteralPredicate):
    __slots__ = ()
    op = "lt"


class LessThanOrEqual(LiteralPredicate):
    __slots__ = ()
    op = "lt-eq"


class GreaterThan(LiteralPredicate):
    __slots__ = ()
    op = "gt"


class GreaterThanOrEqual(LiteralPredicate):
    __slots__ = ()
    op = "gt-eq"


class EqualTo(LiteralPredicate):
    __slots__ = ()
    op = "eq"


class NotEqualTo(LiteralPredicate):
    __slots__ = ()
    op = "not-eq"


class StartsWith(LiteralPredicate):
    __slots__ = ()
    op = "starts-with"


class NotStartsWith(LiteralPredicate):
    __slots__ = ()
    op = "not-starts-with"


class In(SetPredicate):
    __slots__ = ()
    op = "in"


class NotIn(SetPredicate):
    __slots__ = ()
    op = "not-in"


# -- bound predicates


class BoundIsNull(BoundUnaryPredicate):
    __slots__ = ()
    op = "is-null"


class BoundNotNull(BoundUnaryPredicate):
    __slots__ = ()
    op = "not-null"


class BoundIsNaN(BoundUnaryPredicate):
    __slots__ = ()
    op = "is-nan"


class BoundNotNaN(BoundUnaryPredicate):
    __slots__ = ()
    op = "not-nan"


class BoundLessThan(BoundLiteralPredicate):
    __slots__ = ()
    op = "lt"


class BoundLessThanOrEqual(BoundLiteralPredicate):
    __slots__ = ()
    op = "lt-eq"


class BoundGreaterThan(BoundLiteralPredicate):
    __slots__ = ()
    op = "gt"


class BoundGreaterThanOrEqual(BoundLiteralPredicate):
    __slots__ = ()
    op = "gt-eq"


class BoundEqualTo(BoundLiteralPredicate):
    __slots__ = ()
    op = "eq"


class BoundNotEqualTo(BoundLiteralPredicate):
    __slots__ = ()
    op = "not-eq"


class BoundStartsWith(BoundLiteralPredicate):
    __slots__ = ()
    op = "starts-with"


class BoundNotStartsWith(BoundLiteralPredicate):
    __slots__ = ()
    op = "not-starts-with"


class BoundIn(BoundSetPredicate):
    __slots__ = ()
    op = "in"


class BoundNotIn(BoundSetPredicate):
    __slots__ = ()
    op = "not-in"
