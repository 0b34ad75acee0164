"""Boolean expressions: the constants, ``And``, ``Or`` and ``Not``, and the iterative walk that
every operation over an expression tree uses.

Names and constructor shapes follow PyIceberg (``And(left, right, *rest)``, ...). ``And(*terms)``
and ``Or(*terms)`` take any number of children and build a balanced tree of them, in order
(depth about log2(n), linear work), so a filter of thousands of terms stays shallow; with no
child they are ``AlwaysTrue()``/``AlwaysFalse()``, with one, that child. Constructors simplify as
PyIceberg and Java do (``And`` with ``AlwaysFalse()`` is ``AlwaysFalse()``, ``Not(Not(x))`` is
``x``). ``~e`` negates (``~LessThan`` is ``GreaterThanOrEqual``, De Morgan for ``And`` and
``Or``), ``a & b`` is ``And`` and ``a | b`` is ``Or``.

A tree built by hand (``e = Or(e, t)`` in a loop) may be thousands of levels deep: equality,
hashing, ``str``, ``repr``, pickling, negation, binding and JSON never recurse over the tree
(:func:`fold` walks it with a heap stack), so they work at any depth. The native planner reads
any depth too, and balances same-operator chains (see ``frazil-scan``'s ``expr/json.rs``).

``repr`` reads back with ``eval`` (given the names of this package); ``str`` is the row-filter
syntax that :func:`frazil.expressions.parse` reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from frazil.exceptions import InvalidArgumentError
from frazil.expressions.terms import _Immutable

__all__ = ["AlwaysFalse", "AlwaysTrue", "And", "BooleanExpression", "Not", "Or", "fold"]

T = TypeVar("T")

# Precedence in the row-filter syntax, to print only the parentheses that are needed.
_PREC_OR, _PREC_AND, _PREC_NOT, _PREC_ATOM = 1, 2, 3, 4


class BooleanExpression(_Immutable):
    """An expression that evaluates to true or false."""

    __slots__ = ()
    _prec: ClassVar[int] = _PREC_ATOM
    # Unbound predicates at or below this node (a class constant for leaves, counted when an
    # And/Or/Not is built): binding an already bound filter of 100k terms then costs no rebuild.
    _unbound: int = 0

    def negate(self) -> BooleanExpression:
        """The logical negation, pushed into predicates (``~(x < 5)`` is ``x >= 5``)."""
        raise NotImplementedError

    def children(self) -> tuple[BooleanExpression, ...]:
        """The operands of ``And``/``Or``/``Not``; empty for constants and predicates."""
        return ()

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


def fold(
    expr: BooleanExpression,
    leaf: Callable[[BooleanExpression], T],
    node: Callable[[BooleanExpression, list[T]], T],
    children: Callable[[BooleanExpression], Sequence[BooleanExpression]] | None = None,
) -> T:
    """Post-order over ``expr`` without recursion: ``leaf(e)`` for an expression without
    children, ``node(e, results)`` for one with (``results`` in the order of its children).
    ``children`` (default: :meth:`BooleanExpression.children`) decides where the walk stops."""
    kids_of = children or _children
    todo: list[tuple[BooleanExpression, Sequence[BooleanExpression] | None]] = [(expr, None)]
    results: list[T] = []
    while todo:
        e, kids = todo.pop()
        if kids is None:
            kids = kids_of(e)
            if not kids:
                results.append(leaf(e))
                continue
            todo.append((e, kids))
            todo.extend((k, None) for k in reversed(kids))
        else:
            n = len(kids)
            args = results[-n:]
            del results[-n:]
            results.append(node(e, args))
    return results[0]


def _children(e: BooleanExpression) -> Sequence[BooleanExpression]:
    return e.children()


def _check_expr(e: Any) -> BooleanExpression:
    if not isinstance(e, BooleanExpression):
        raise InvalidArgumentError(f"expected a BooleanExpression, got {e!r}")
    return e


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


class _Compound(BooleanExpression):
    """``And``/``Or``/``Not``: equality, hash, text and pickling without recursion. The hash is
    computed once, from the children's, when the node is built."""

    __slots__ = ("_hash", "_unbound")
    _hash: int

    def __eq__(self, other: object) -> bool:
        pairs: list[tuple[object, object]] = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if type(a) is not type(b):
                return False
            if isinstance(a, _Compound):
                assert isinstance(b, _Compound)
                if a._hash != b._hash:
                    return False
                pairs.extend(zip(a.children(), b.children(), strict=True))
            elif a != b:
                return False
        return True

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return _render(self, 0, repr_form=True)

    def __str__(self) -> str:
        return _render(self, 0, repr_form=False)

    def __reduce__(self) -> Any:
        # A flat postfix list, so that pickling a deep tree does not recurse either.
        def leaf(e: BooleanExpression) -> list[Any]:
            return [e]

        def node(e: BooleanExpression, parts: list[list[Any]]) -> list[Any]:
            out = parts[0]
            for p in parts[1:]:
                out.extend(p)
            out.append(type(e))
            return out

        return (_from_postfix, (fold(self, leaf, node),))


def _from_postfix(items: list[Any]) -> BooleanExpression:
    stack: list[BooleanExpression] = []
    for item in items:
        if item is Not:
            stack.append(Not(stack.pop()))
        elif item is And or item is Or:
            right = stack.pop()
            stack.append(item(stack.pop(), right))
        else:
            stack.append(item)
    return stack[0]


def _render(expr: BooleanExpression, prec: int, repr_form: bool) -> str:
    """``str`` (the row-filter syntax, parenthesized only where needed) or ``repr`` of a tree,
    built from a heap stack of pieces."""
    out: list[str] = []
    todo: list[str | tuple[BooleanExpression, int]] = [(expr, prec)]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        e, outer = item
        parts: list[str | tuple[BooleanExpression, int]]
        if isinstance(e, _Junction):
            if repr_form:
                parts = [f"{type(e).__name__}(left=", (e.left, 0), ", right=", (e.right, 0), ")"]
            else:
                # Nested junctions keep their parentheses, so the text parses back the same.
                inner = e._prec + 1
                parts = [(e.left, inner), f" {e._keyword} ", (e.right, inner)]
        elif isinstance(e, Not):
            parts = (
                ["Not(child=", (e.child, 0), ")"] if repr_form else ["NOT ", (e.child, _PREC_NOT)]
            )
        else:
            parts = [repr(e) if repr_form else str(e)]
        if not repr_form and e._prec < outer:
            parts = ["(", *parts, ")"]
        todo.extend(reversed(parts))
    return "".join(out)


def _balanced(cls: type[_Junction], items: Sequence[BooleanExpression]) -> BooleanExpression:
    """A balanced tree of ``items`` in order, split at half as PyIceberg's
    ``_build_balanced_tree`` (and the native reader) split; recursion depth is log2(n)."""

    def build(lo: int, hi: int) -> BooleanExpression:
        if hi - lo == 1:
            return items[lo]
        mid = lo + (hi - lo) // 2
        return cls(build(lo, mid), build(mid, hi))

    return build(0, len(items))


class _Junction(_Compound):
    """And/Or: a node of two children, simplified on construction against the constant that
    decides the junction (``_absorbing``) and the one it ignores (``_neutral``)."""

    __slots__ = ("left", "right")
    _absorbing: ClassVar[type[BooleanExpression]]
    _neutral: ClassVar[type[BooleanExpression]]
    _keyword: ClassVar[str]
    left: BooleanExpression
    right: BooleanExpression

    # Construction simplifies, so __new__ may return another expression than a _Junction.
    def __new__(  # type: ignore[misc]
        cls,
        *children: BooleanExpression,
        left: BooleanExpression | None = None,
        right: BooleanExpression | None = None,
    ) -> BooleanExpression:
        if left is not None or right is not None:
            if children or left is None or right is None:
                raise InvalidArgumentError(
                    f"{cls.__name__} takes children, or left= and right=, not both"
                )
            children = (left, right)
        if len(children) == 2:
            a, b = _check_expr(children[0]), _check_expr(children[1])
            if isinstance(a, cls._absorbing) or isinstance(b, cls._absorbing):
                return cls._absorbing()
            if isinstance(a, cls._neutral):
                return b
            if isinstance(b, cls._neutral):
                return a
            self = super().__new__(cls)
            self._set(
                left=a,
                right=b,
                _hash=hash((cls._keyword, hash(a), hash(b))),
                _unbound=a._unbound + b._unbound,
            )
            return self
        # n-ary: constants first (so the balanced tree is over the operands that remain).
        kept = []
        for c in children:
            if isinstance(_check_expr(c), cls._absorbing):
                return cls._absorbing()
            if not isinstance(c, cls._neutral):
                kept.append(c)
        if not kept:
            return cls._neutral()
        return _balanced(cls, kept)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def children(self) -> tuple[BooleanExpression, ...]:
        return (self.left, self.right)


class And(_Junction):
    """Logical conjunction; ``And(a, b, c, ...)`` builds a balanced tree."""

    __slots__ = ()
    _prec = _PREC_AND
    _absorbing = AlwaysFalse
    _neutral = AlwaysTrue
    _keyword = "AND"

    def negate(self) -> BooleanExpression:
        return _negate(self)


class Or(_Junction):
    """Logical disjunction; ``Or(a, b, c, ...)`` builds a balanced tree."""

    __slots__ = ()
    _prec = _PREC_OR
    _absorbing = AlwaysTrue
    _neutral = AlwaysFalse
    _keyword = "OR"

    def negate(self) -> BooleanExpression:
        return _negate(self)


class Not(_Compound):
    """Logical negation, kept as a node (``~e`` pushes the negation into ``e`` instead)."""

    __slots__ = ("child",)
    _prec = _PREC_NOT
    child: BooleanExpression

    def __new__(  # type: ignore[misc]
        cls, *args: BooleanExpression, child: BooleanExpression | None = None
    ) -> BooleanExpression:
        if (child is None) == (len(args) != 1):
            raise InvalidArgumentError("Not takes one child")
        inner = _check_expr(args[0] if child is None else child)
        if isinstance(inner, AlwaysTrue):
            return AlwaysFalse()
        if isinstance(inner, AlwaysFalse):
            return AlwaysTrue()
        if isinstance(inner, Not):
            return inner.child
        self = super().__new__(cls)
        self._set(child=inner, _hash=hash(("not", hash(inner))), _unbound=inner._unbound)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def negate(self) -> BooleanExpression:
        return self.child

    def children(self) -> tuple[BooleanExpression, ...]:
        return (self.child,)


def _negate(expr: BooleanExpression) -> BooleanExpression:
    """De Morgan down to the predicates, without recursion: ``Not(x)`` negates to ``x``."""

    def stop_at_not(e: BooleanExpression) -> Sequence[BooleanExpression]:
        return () if isinstance(e, Not) else e.children()

    def node(e: BooleanExpression, negated: list[BooleanExpression]) -> BooleanExpression:
        return Or(*negated) if isinstance(e, And) else And(*negated)

    return fold(expr, lambda e: e.negate(), node, stop_at_not)
