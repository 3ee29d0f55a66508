"""Frozen value classes, declared like frozen dataclasses but cheap to create at import.

``@record`` reads a class's annotated fields and defaults and gives it what a frozen dataclass
has: an ``__init__`` taking the fields (positionally or by name), ``__eq__`` and ``__hash__``
over the field values, a ``__repr__``, optional ordering, ``__post_init__``, and no assignment
after construction. ``fields``, ``replace`` and ``is_record`` stand in for the ``dataclasses``
functions of the same names.

Why not ``dataclasses``: on the Python versions cudadoctor supports, ``@dataclass`` compiles
six generated methods with ``exec`` for every class, about 0.5-1 ms each; the ~40 classes on the
path of ``cudadoctor check`` made that the largest single start-up cost (docs/performance.md).
Here the methods are shared functions, and a class costs a few microseconds; only a class built
a hundred times in one process (the fleet's findings, say) gets an ``__init__`` compiled for its fields.
"""

from __future__ import annotations

import keyword
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sys
    from typing import Any, Callable, Generic, Optional, TypeVar, overload

    if sys.version_info >= (3, 11):
        from typing import dataclass_transform
    else:
        from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:
    # What type checkers read of typing, made inert: typing costs a `check` about 4 ms to import
    # (docs/performance.md), and none of these changes what a record does. An overload's variants
    # are replaced by its last definition, as with typing's; kept[T] is kept.
    def overload(func: object) -> object:
        return func

    def dataclass_transform(**_: object) -> object:
        return lambda decorated: decorated

    class Generic:
        def __class_getitem__(cls, item: object) -> type:
            return cls

    T = None

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a record (records are immutable)."""


class Field:
    """One field: its name, annotation (as written) and default."""

    __slots__ = ("name", "type", "default", "default_factory", "repr")

    def __init__(self, default: Any = _MISSING, default_factory: Any = _MISSING, repr: bool = True):
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.repr = repr

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is _MISSING

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


def field(*, default: Any = _MISSING, default_factory: Optional[Callable[[], Any]] = None, repr: bool = True) -> Any:
    """A field with a default factory or without a repr, as ``dataclasses.field``."""
    return Field(default=default, default_factory=default_factory if default_factory is not None else _MISSING, repr=repr)


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    if args:
        names = cls.__record_names__
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} arguments, {len(args)} were given")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
            kwargs[name] = value
    given = kwargs.keys()
    if not given <= cls.__record_name_set__:
        unknown = next(name for name in kwargs if name not in cls.__record_name_set__)
        raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unknown!r}")
    if not cls.__record_required__ <= given:
        missing = next(name for name in cls.__record_names__ if name in cls.__record_required__ and name not in kwargs)
        raise TypeError(f"{cls.__name__}() missing required argument {missing!r}")
    # Set and dict operations do the work in C; the values go straight into the instance dict
    # (the class's __setattr__ refuses assignment).
    values = self.__dict__
    values.update(cls.__record_defaults__)
    for name, factory in cls.__record_factories__:
        if name not in kwargs:
            values[name] = factory()
    values.update(kwargs)
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


def _class_init(klass: type) -> Callable[..., None]:
    """The ``__init__`` of one record class: what ``_init`` does, with the class's field names,
    defaults and ``__post_init__`` bound once (a finding or a driver support is built tens of
    times per check, and looking each of them up on the class was most of the cost). Anything
    unusual (a subclass that is not itself a record, a bad call) goes to ``_init``, which also
    words the errors."""
    names: tuple[str, ...] = klass.__record_names__  # type: ignore[attr-defined]
    name_set: frozenset[str] = klass.__record_name_set__  # type: ignore[attr-defined]
    required: frozenset[str] = klass.__record_required__  # type: ignore[attr-defined]
    defaults: dict[str, Any] = klass.__record_defaults__  # type: ignore[attr-defined]
    factories: tuple[tuple[str, Callable[[], Any]], ...] = klass.__record_factories__  # type: ignore[attr-defined]
    post_init = getattr(klass, "__post_init__", None)
    width = len(names)
    # The fewest positional arguments that give every required field (required fields come first).
    least = max((i + 1 for i, name in enumerate(names) if name in required), default=0)

    built = 0

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        if built >= _COMPILE_AFTER and klass.__dict__.get("__init__") is __init__:  # >=: threads may race past it
            compiled = _compiled_init(klass)
            if compiled is not None:
                klass.__init__ = compiled  # type: ignore[misc]  # the next ones are built by it
            else:
                built = -(1 << 62)  # field names Python cannot take as parameters: the generic one stays
        count = len(args)
        if type(self) is not klass or count > width or (args and kwargs and not kwargs.keys().isdisjoint(names[:count])):
            _init(self, *args, **kwargs)
            return
        if not kwargs and count >= least and not factories:  # positional only: nothing to check
            values = self.__dict__
            values.update(defaults)
            values.update(zip(names, args))
            if post_init is not None:
                post_init(self)
            return
        if args:
            kwargs.update(zip(names, args))
        if not (kwargs.keys() <= name_set and required <= kwargs.keys()):
            _init(self, **kwargs)
            return
        values = self.__dict__
        values.update(defaults)
        for name, factory in factories:
            if name not in kwargs:
                values[name] = factory()
        values.update(kwargs)
        if post_init is not None:
            post_init(self)

    __init__.__record_init__ = True  # type: ignore[attr-defined]
    return __init__


# A class built this many times in one process gets an ``__init__`` compiled for its fields
# (_compiled_init): compiling one costs about as much as 100-200 constructions save, so a class
# built a few times per command (a `check` of one host) never pays it, and the fleet's loop does.
_COMPILE_AFTER = 100


def _compiled_init(klass: type) -> Optional[Callable[..., None]]:
    """The ``__init__`` of one record class as Python would write it: a parameter per field, so
    the call binds them in C, and one dict display for the instance; about half the cost of the
    generic one. A call it cannot bind as the class's own (a missing or unknown field, too many
    arguments, a subclass that is not itself a record) goes to ``_init``, which words the errors;
    a call Python refuses while binding it (a field given twice, positionally and by name) is
    worded by Python, naming ``Class.__init__`` where the generic one says ``Class()``. None when a
    field's name cannot be a parameter (a keyword, not an identifier, or the body's own ``_r_``)."""
    names: tuple[str, ...] = klass.__record_names__  # type: ignore[attr-defined]
    if not all(name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_r_") for name in names):
        return None
    required: frozenset[str] = klass.__record_required__  # type: ignore[attr-defined]
    defaults: dict[str, Any] = klass.__record_defaults__  # type: ignore[attr-defined]
    factories: dict[str, Callable[[], Any]] = dict(klass.__record_factories__)  # type: ignore[attr-defined]
    post_init = getattr(klass, "__post_init__", None)
    # Every name the body uses is prefixed, so that no field (one named "type", say) shadows it.
    scope: dict[str, Any] = {"_r_missing": _MISSING, "_r_klass": klass, "_r_type": type, "_r_slow": _unbound_call,
                             "_r_names": names, "_r_set": object.__setattr__, "_r_post": post_init,
                             "__name__": klass.__module__}
    params, checks, fills = [], [], []
    for i, name in enumerate(names):
        if name in defaults:
            scope[f"_r_default{i}"] = defaults[name]
            params.append(f"{name}=_r_default{i}")
            continue
        params.append(f"{name}=_r_missing")
        if name in required:
            checks.append(f" or {name} is _r_missing")
        else:
            scope[f"_r_factory{i}"] = factories[name]
            fills.append(f"    if {name} is _r_missing:\n        {name} = _r_factory{i}()\n")
    given = ", ".join(names) + ("," if len(names) == 1 else "")
    source = (
        f"def __init__(_r_self, {''.join(p + ', ' for p in params)}*_r_args, **_r_kwargs):\n"
        f"    if _r_args or _r_kwargs or _r_type(_r_self) is not _r_klass{''.join(checks)}:\n"
        f"        return _r_slow(_r_self, _r_names, ({given}), _r_args, _r_kwargs)\n"
        + "".join(fills)
        + f"    _r_set(_r_self, '__dict__', {{{', '.join(f'{name!r}: {name}' for name in names)}}})\n"
        + ("    _r_post(_r_self)\n" if post_init is not None else "")
    )
    exec(compile(source, f"<record {klass.__qualname__}>", "exec"), scope)  # the source is built above from the field names alone
    compiled: Callable[..., None] = scope["__init__"]
    compiled.__qualname__ = f"{klass.__qualname__}.__init__"
    compiled.__record_init__ = True  # type: ignore[attr-defined]
    return compiled


def _unbound_call(self: Any, names: tuple[str, ...], values: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The call a compiled ``__init__`` could not take, made again to ``_init`` as it was given:
    with extra positional arguments every field was given positionally; otherwise each field's
    value, or its absence, is as the caller gave it (a default filled in is the same value)."""
    if args:
        _init(self, *values, *args, **kwargs)
        return
    _init(self, **{name: value for name, value in zip(names, values) if value is not _MISSING}, **kwargs)


def _eq(self: Any, other: object) -> Any:
    if type(other) is not type(self):
        return NotImplemented
    values = type(self).__record_values__  # type: ignore[attr-defined]
    return values(self) == values(other)


def _hash(self: Any) -> int:
    return hash((type(self).__qualname__, type(self).__record_values__(self)))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={self.__dict__[f.name]!r}" for f in self.__record_fields__ if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}: {type(self).__name__} is immutable")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}: {type(self).__name__} is immutable")


def _order(op: Callable[[tuple[Any, ...], tuple[Any, ...]], bool]) -> Callable[[Any, object], Any]:
    def compare(self: Any, other: object) -> Any:
        if type(other) is not type(self):
            return NotImplemented
        values = type(self).__record_values__  # type: ignore[attr-defined]
        return op(values(self), values(other))

    return compare


@overload
def record(cls: type[T]) -> type[T]: ...


@overload
def record(*, eq: bool = True, order: bool = False) -> Callable[[type[T]], type[T]]: ...  # noqa: F811 (the overload above is typing's to ruff only under TYPE_CHECKING)


# Tells type checkers (PEP 681) that records are built like frozen dataclasses: the same __init__.
@dataclass_transform(eq_default=True, order_default=False, frozen_default=True, field_specifiers=(field,))
def record(cls: Optional[type] = None, *, eq: bool = True, order: bool = False) -> Any:  # noqa: F811
    """Make ``cls`` a frozen value class (see the module docstring). ``eq=False`` keeps the
    class's own (or inherited) equality and hashing; ``order=True`` orders by the field values."""

    def make(klass: type) -> type:
        # Fields by name, in order: those of record bases first (each base's own, nearest last),
        # then this class's; a field declared again keeps its place and takes the new declaration.
        by_name: dict[str, Field] = {}
        for base in reversed(klass.__mro__[1:]):
            for spec in base.__dict__.get("__record_fields__", ()):
                by_name[spec.name] = spec
        for name, annotation in klass.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = klass.__dict__.get(name, _MISSING)
            if isinstance(value, (list, dict, set)):
                raise ValueError(f"{klass.__name__}.{name}: a mutable default is shared by every instance; use field(default_factory=...)")
            spec = Field(value.default, value.default_factory, value.repr) if isinstance(value, Field) else Field(default=value)
            spec.name, spec.type = name, annotation
            if isinstance(value, Field):
                if spec.default is _MISSING:
                    delattr(klass, name)  # the instance holds the value; no class attribute shadows it
                else:
                    setattr(klass, name, spec.default)
            by_name[name] = spec
        specs = list(by_name.values())
        required_after_default = False
        for spec in specs:
            if not spec.required:
                required_after_default = True
            elif required_after_default:
                raise TypeError(f"{klass.__name__}: required field {spec.name!r} follows a field with a default")
        klass.__record_fields__ = tuple(specs)  # type: ignore[attr-defined]
        names = tuple(spec.name for spec in specs)
        klass.__record_names__ = names  # type: ignore[attr-defined]
        klass.__record_name_set__ = frozenset(names)  # type: ignore[attr-defined]
        klass.__record_required__ = frozenset(s.name for s in specs if s.required)  # type: ignore[attr-defined]
        klass.__record_defaults__ = {s.name: s.default for s in specs if s.default is not _MISSING}  # type: ignore[attr-defined]
        klass.__record_factories__ = tuple(  # type: ignore[attr-defined]
            (s.name, s.default_factory) for s in specs if s.default_factory is not _MISSING
        )
        # The field values as one tuple, read in C (equality, hashing and ordering use it).
        getter = attrgetter(*names) if len(names) > 1 else (lambda obj, _get=attrgetter(*names): (_get(obj),)) if names else (lambda obj: ())
        klass.__record_values__ = staticmethod(getter)  # type: ignore[attr-defined]
        own = klass.__dict__
        # As dataclasses do: a method the class body writes itself is kept.
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        methods: dict[str, Any] = {"__init__": _class_init(klass), "__repr__": _repr}
        if eq:
            methods["__eq__"] = _eq
        if order:
            methods.update(
                __lt__=_order(lambda a, b: a < b),
                __le__=_order(lambda a, b: a <= b),
                __gt__=_order(lambda a, b: a > b),
                __ge__=_order(lambda a, b: a >= b),
            )
        for method_name, method in methods.items():
            if method_name not in own:
                setattr(klass, method_name, method)
        if eq and not explicit_hash:
            klass.__hash__ = _hash  # type: ignore[assignment]
        klass.__setattr__ = _setattr  # type: ignore[assignment]
        klass.__delattr__ = _delattr  # type: ignore[assignment]
        klass.__match_args__ = names  # type: ignore[attr-defined,misc]
        return klass

    return make if cls is None else make(cls)


class kept(Generic[T]):
    """A property worked out once per instance and kept in its dict, outside the fields (so a
    replace()d record works it out again): ``functools.cached_property`` without the lock that
    Python 3.10 and 3.11 take on each first read, about 1 µs, which a host's view and its check
    context pay for every host a fleet judges."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: Optional[type] = None) -> "kept[T]": ...

    @overload
    def __get__(self, instance: object, owner: Optional[type] = None) -> T: ...  # noqa: F811 (as for record)

    def __get__(self, instance: Optional[object], owner: Optional[type] = None) -> Any:  # noqa: F811
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)  # the instance's dict is read first from now on
        return value


def is_record(value: Any) -> bool:
    """A record instance (not the class)."""
    return not isinstance(value, type) and hasattr(type(value), "__record_fields__")


def fields(value: Any) -> tuple[Field, ...]:
    """The fields of a record class or instance, in declaration order."""
    cls = value if isinstance(value, type) else type(value)
    return cls.__record_fields__  # type: ignore[attr-defined,no-any-return]


def field_values(value: Any) -> dict[str, Any]:
    """A record's fields as a new dict, name to value, in declaration order (what ``maker``'s
    records are made from)."""
    return dict(zip(type(value).__record_names__, type(value).__record_values__(value)))


def maker(cls: type[T]) -> Callable[[dict[str, Any]], T]:
    """A function making records of ``cls`` as ``replace`` makes its copies, from a dict of every
    field's value and nothing else, which becomes the record's own (give each a fresh one): for a
    caller making thousands (a fleet's snapshots), ``cls``'s checks are looked up once."""
    if not getattr(cls.__init__, "__record_init__", False):
        return lambda values: cls(**values)
    post_init = getattr(cls, "__post_init__", None)
    new, set_dict = object.__new__, object.__setattr__

    def make(values: dict[str, Any]) -> T:
        made: T = new(cls)
        set_dict(made, "__dict__", values)
        if post_init is not None:
            post_init(made)
        return made

    return make


def replace(value: T, **changes: Any) -> T:
    """A copy of a record with some fields changed, as ``dataclasses.replace``.

    Every field is given, so the record's own ``__init__`` would only look each name up again:
    the copy is made from the values directly and ``__post_init__`` (a record's checks) runs as
    the constructor runs it. A class that writes its own ``__init__`` is constructed as before."""
    cls = type(value)
    names = cls.__record_names__  # type: ignore[attr-defined]
    if not changes.keys() <= cls.__record_name_set__:  # type: ignore[attr-defined]
        unknown = next(name for name in changes if name not in cls.__record_name_set__)  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__} has no field {unknown!r}")
    source = value.__dict__
    # A record's dict holds its fields and, when longer, values kept beside them (record.kept,
    # caches) that the copy must work out again; their order is nobody's (fields() gives it).
    current = source.copy() if len(source) == len(names) else {name: source[name] for name in names}
    current.update(changes)
    if not getattr(cls.__init__, "__record_init__", False):
        return cls(**current)
    copy: T = object.__new__(cls)
    object.__setattr__(copy, "__dict__", current)
    post_init = getattr(copy, "__post_init__", None)
    if post_init is not None:
        post_init()
    return copy
