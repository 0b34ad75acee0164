"""Expression trees: terms, predicates and boolean logic, unbound (by name) and bound (by id).

Names and constructor shapes follow PyIceberg (``EqualTo(term, literal)``, ``In(term, literals)``,
``And(left, right, *rest)``, ...); constructors simplify as PyIceberg and Java do (``And`` with
``AlwaysFalse()`` is ``AlwaysFalse()``, ``Not(Not(x))`` is ``x``, ``In`` with one value is
``EqualTo``). ``~e`` negates (``~LessThan`` is ``GreaterThanOrEqual``, De Morgan for ``And`` and
``Or``), ``a & b`` is ``And`` and ``a | b`` is ``Or``.

``repr`` reads back with ``eval`` (given the names of this package); ``str`` is the row-filter
syntax that :func:`frazil.expressions.parse` reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

from frazil.exceptions import InvalidArgumentError
from frazil.expressions.literals import Literal, literal
from frazil.transforms import Transform
from frazil.types import IcebergType, NestedField

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
]


class _Immutable:
    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set(self, **fields: Any) -> None:
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __setstate__(self, state: Any) -> None:  # unpickling slotted objects
        slots = state[1] if isinstance(state, tuple) else state
        self._set(**(slots or {}))


# ---------------------------------------------------------------------------------------------
# terms

_PLAIN_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_KEYWORDS = {"and", "or", "not", "is", "in", "null", "nan", "like", "between", "true", "false"}


def _quote_name(name: str) -> str:
    """A dotted field name in the row-filter syntax, each part quoted only when it must be."""
    parts = []
    for part in name.split("."):
        if _PLAIN_IDENT.fullmatch(part) and part.lower() not in _KEYWORDS:
            parts.append(part)
        else:
            parts.append("`" + part.replace("`", "``") + "`")
    return ".".join(parts)


class Term(_Immutable):
    """A value expression: a field reference or a transform of one."""

    __slots__ = ()


class UnboundTerm(Term):
    __slots__ = ()


class BoundTerm(Term):
    __slots__ = ()

    @property
    def type(self) -> IcebergType:
        raise NotImplementedError

    @property
    def ref(self) -> BoundReference:
        raise NotImplementedError


class Reference(UnboundTerm):
    """A field by name (``"a.b"`` for a nested field), resolved when bound to a schema."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"a reference needs a non-empty field name, got {name!r}")
        self._set(name=name)

    @property
    def ref(self) -> Reference:
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("ref", self.name))

    def __repr__(self) -> str:
        return f"Reference(name={self.name!r})"

    def __str__(self) -> str:
        return _quote_name(self.name)


class BoundReference(BoundTerm):
    """A field of a schema, by id; ``name`` is its full name in the schema it was bound to."""

    __slots__ = ("field", "name")
    field: NestedField
    name: str

    def __init__(self, field: NestedField, name: str | None = None) -> None:
        if not isinstance(field, NestedField):
            raise InvalidArgumentError(f"a bound reference needs a NestedField, got {field!r}")
        self._set(field=field, name=name if name is not None else field.name)

    @property
    def field_id(self) -> int:
        return self.field.field_id

    @property
    def type(self) -> IcebergType:
        return self.field.field_type

    @property
    def ref(self) -> BoundReference:
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundReference)
            and other.field.field_id == self.field.field_id
            and other.field.field_type == self.field.field_type
        )

    def __hash__(self) -> int:
        return hash(("bound-ref", self.field.field_id))

    def __repr__(self) -> str:
        return f"BoundReference(field={self.field!r}, name={self.name!r})"

    def __str__(self) -> str:
        return _quote_name(self.name)


def _transform_of(transform: Transform | str) -> Transform:
    if isinstance(transform, Transform):
        return transform
    if isinstance(transform, str):
        return Transform(transform)
    raise InvalidArgumentError(f"expected a Transform or transform string, got {transform!r}")


def _transform_call(transform: Transform, arg: str) -> str:
    """``bucket(16, id)`` / ``day(ts)``: the function-call spelling of the expressions spec."""
    spec = str(transform)
    if "[" in spec:
        name, param = spec[:-1].split("[")
        return f"{name}({param}, {arg})"
    return f"{spec}({arg})"


class UnboundTransform(UnboundTerm):
    """A partition transform applied to a named field, e.g. ``bucket(16, id)``."""

    __slots__ = ("ref", "transform")
    transform: Transform
    ref: Reference

    def __init__(self, transform: Transform | str, ref: Reference | str) -> None:
        t = _transform_of(transform)
        if str(t) == "void":
            raise InvalidArgumentError("void is not a function of the expressions spec")
        self._set(transform=t, ref=Reference(ref) if isinstance(ref, str) else ref)
        if not isinstance(self.ref, Reference):
            raise InvalidArgumentError(f"a transform term applies to a Reference, got {ref!r}")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnboundTransform)
            and other.transform == self.transform
            and other.ref == self.ref
        )

    def __hash__(self) -> int:
        return hash(("transform", str(self.transform), self.ref))

    def __repr__(self) -> str:
        return f"UnboundTransform(transform={str(self.transform)!r}, ref={self.ref!r})"

    def __str__(self) -> str:
        return _transform_call(self.transform, str(self.ref))


class BoundTransform(BoundTerm):
    __slots__ = ("_type", "ref", "transform")
    transform: Transform
    ref: BoundReference
    _type: IcebergType

    def __init__(self, transform: Transform | str, ref: BoundReference) -> None:
        t = _transform_of(transform)
        if not isinstance(ref, BoundReference):
            raise InvalidArgumentError(f"a bound transform applies to a BoundReference: {ref!r}")
        if not t.can_transform(ref.type):
            raise InvalidArgumentError(f"transform {t} cannot be applied to {ref.type} {ref.name}")
        self._set(transform=t, ref=ref, _type=t.result_type(ref.type))

    @property
    def type(self) -> IcebergType:
        return self._type

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundTransform)
            and other.transform == self.transform
            and other.ref == self.ref
        )

    def __hash__(self) -> int:
        return hash(("bound-transform", str(self.transform), self.ref))

    def __repr__(self) -> str:
        return f"BoundTransform(transform={str(self.transform)!r}, ref={self.ref!r})"

    def __str__(self) -> str:
        return _transform_call(self.transform, str(self.ref))


def _unbound_term(term: Any) -> UnboundTerm:
    if isinstance(term, str):
        return Reference(term)
    if isinstance(term, UnboundTerm):
        return term
    raise InvalidArgumentError(
        f"expected a column name, Reference or UnboundTransform, got {term!r}"
    )


def _bound_term(term: Any) -> BoundTerm:
    if isinstance(term, BoundTerm):
        return term
    raise InvalidArgumentError(f"expected a BoundReference or BoundTransform, got {term!r}")


# ---------------------------------------------------------------------------------------------
# boolean expressions

# Precedence in the row-filter syntax, to print only the parentheses that are needed.
_PREC_OR, _PREC_AND, _PREC_NOT, _PREC_ATOM = 1, 2, 3, 4


class BooleanExpression(_Immutable):
    """An expression that evaluates to true or false."""

    __slots__ = ()
    _prec: ClassVar[int] = _PREC_ATOM

    def negate(self) -> BooleanExpression:
        """The logical negation, pushed into predicates (``~(x < 5)`` is ``x >= 5``)."""
        raise NotImplementedError

    def __invert__(self) -> BooleanExpression:
        return self.negate()

    def __and__(self, other: BooleanExpression) -> BooleanExpression:
        if not isinstance(other, BooleanExpression):
            return NotImplemented
        return And(self, other)

    def __or__(self, other: BooleanExpression) -> BooleanExpression:
        if not isinstance(other, BooleanExpression):
            return NotImplemented
        return Or(self, other)

    def _str_in(self, prec: int) -> str:
        text = str(self)
        return f"({text})" if self._prec < prec else text


class AlwaysTrue(BooleanExpression):
    """The constant true predicate (a singleton)."""

    __slots__ = ()
    _instance: ClassVar[AlwaysTrue | None] = None

    def __new__(cls) -> AlwaysTrue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def negate(self) -> BooleanExpression:
        return AlwaysFalse()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AlwaysTrue)

    def __hash__(self) -> int:
        return hash(True)

    def __repr__(self) -> str:
        return "AlwaysTrue()"

    def __str__(self) -> str:
        return "true"

    def __reduce__(self) -> Any:
        return (AlwaysTrue, ())


class AlwaysFalse(BooleanExpression):
    """The constant false predicate (a singleton)."""

    __slots__ = ()
    _instance: ClassVar[AlwaysFalse | None] = None

    def __new__(cls) -> AlwaysFalse:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def negate(self) -> BooleanExpression:
        return AlwaysTrue()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AlwaysFalse)

    def __hash__(self) -> int:
        return hash(False)

    def __repr__(self) -> str:
        return "AlwaysFalse()"

    def __str__(self) -> str:
        return "false"

    def __reduce__(self) -> Any:
        return (AlwaysFalse, ())


def _check_expr(e: Any) -> BooleanExpression:
    if not isinstance(e, BooleanExpression):
        raise InvalidArgumentError(f"expected a BooleanExpression, got {e!r}")
    return e


def _balanced(cls: Any, items: tuple[BooleanExpression, ...]) -> BooleanExpression:
    # A balanced tree keeps the depth logarithmic for long conjunctions (thousands of terms).
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return cls(_balanced(cls, items[:mid]), _balanced(cls, items[mid:]))


class _Junction(BooleanExpression):
    """And/Or: a balanced tree of two children, simplified on construction against the
    constant that decides the junction (``_absorbing``) and the one it ignores (``_neutral``)."""

    __slots__ = ("left", "right")
    _absorbing: type[BooleanExpression]
    _neutral: type[BooleanExpression]
    _keyword: str
    left: BooleanExpression
    right: BooleanExpression

    # Construction simplifies, so __new__ may return another expression than a _Junction.
    def __new__(  # type: ignore[misc]
        cls, left: BooleanExpression, right: BooleanExpression, *rest: BooleanExpression
    ) -> BooleanExpression:
        if rest:
            return _balanced(cls, tuple(map(_check_expr, (left, right, *rest))))
        left, right = _check_expr(left), _check_expr(right)
        if isinstance(left, cls._absorbing) or isinstance(right, cls._absorbing):
            return cls._absorbing()
        if isinstance(left, cls._neutral):
            return right
        if isinstance(right, cls._neutral):
            return left
        self = super().__new__(cls)
        self._set(left=left, right=right)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.left == self.left  # type: ignore[attr-defined]
            and other.right == self.right  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((self._keyword.lower(), self.left, self.right))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(left={self.left!r}, right={self.right!r})"

    def __str__(self) -> str:
        # Nested junctions keep their parentheses so that the text parses back to the same tree.
        inner = self._prec + 1
        return f"{self.left._str_in(inner)} {self._keyword} {self.right._str_in(inner)}"

    def __reduce__(self) -> Any:
        return (type(self), (self.left, self.right))


class And(_Junction):
    """Logical conjunction; ``And(a, b, c, ...)`` builds a balanced tree."""

    __slots__ = ()
    _prec = _PREC_AND
    _absorbing = AlwaysFalse
    _neutral = AlwaysTrue
    _keyword = "AND"

    def negate(self) -> BooleanExpression:
        return Or(self.left.negate(), self.right.negate())


class Or(_Junction):
    """Logical disjunction; ``Or(a, b, c, ...)`` builds a balanced tree."""

    __slots__ = ()
    _prec = _PREC_OR
    _absorbing = AlwaysTrue
    _neutral = AlwaysFalse
    _keyword = "OR"

    def negate(self) -> BooleanExpression:
        return And(self.left.negate(), self.right.negate())


class Not(BooleanExpression):
    """Logical negation, kept as a node (``~e`` pushes the negation into ``e`` instead)."""

    __slots__ = ("child",)
    _prec = _PREC_NOT
    child: BooleanExpression

    def __new__(cls, child: BooleanExpression) -> BooleanExpression:  # type: ignore[misc]
        child = _check_expr(child)
        if isinstance(child, AlwaysTrue):
            return AlwaysFalse()
        if isinstance(child, AlwaysFalse):
            return AlwaysTrue()
        if isinstance(child, Not):
            return child.child
        self = super().__new__(cls)
        self._set(child=child)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def negate(self) -> BooleanExpression:
        return self.child

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Not) and other.child == self.child

    def __hash__(self) -> int:
        return hash(("not", self.child))

    def __repr__(self) -> str:
        return f"Not(child={self.child!r})"

    def __str__(self) -> str:
        return f"NOT {self.child._str_in(_PREC_NOT)}"

    def __reduce__(self) -> Any:
        return (Not, (self.child,))


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
        return type(other) is type(self) and other.term == self.term  # type: ignore[attr-defined]

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
            type(other) is type(self)
            and other.term == self.term  # type: ignore[attr-defined]
            and other.literal == self.literal  # type: ignore[attr-defined]
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
            and other.term == self.term  # type: ignore[attr-defined]
            and frozenset(other.literals) == frozenset(self.literals)  # type: ignore[attr-defined]
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
