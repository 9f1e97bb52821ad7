"""Whether one entry activates in one pass, and why not (classic.md §1, §2.4 check order).

The order is SillyTavern's ``checkWorldInfo`` loop: disabled, timed delay, cooldown (unless
sticky), CCv3 eligibility decorators, delay-until-recursion and exclude-recursion (unless
sticky), ``@@activate``, ``@@dont_activate``, constant, active sticky, kept after a match, then
keys: a primary key (rule 5), the secondary logic (rule 12) and ``@@additional_keys`` /
``@@exclude_keys`` (rule 19).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from worldbook.core.classic.compiled import EntrySpec, KeyRef
from worldbook.core.classic.model import AND_ALL, AND_ANY, NOT_ALL, NOT_ANY
from worldbook.core.classic.result import Cause, Fate, KeyHit
from worldbook.core.classic.scan import BookScan
from worldbook.core.classic.timed import BookTimers


@dataclass(frozen=True, slots=True)
class PassContext:
    """What one pass of the turn looks at."""

    pass_no: int
    recursion: bool  # a recursion pass (2nd or 3rd): recursed content is scanned too
    level: int  # the open delay-until-recursion level (0 outside recursion)
    extra_depth: int  # minimum-activation sweep: book-depth windows widened by this much
    assistant_messages: int
    greeting_index: int | None


class Outcome(NamedTuple):
    """``fate`` None = activated (with ``cause``); otherwise the fate and its reason."""

    fate: Fate | None
    reason: str
    cause: Cause | None = None
    hits: tuple[KeyHit, ...] = ()
    score: int = 0
    pass_no: int = 1


def _no(fate: Fate, reason: str, ctx: PassContext, hits: tuple[KeyHit, ...] = ()) -> Outcome:
    return Outcome(fate, reason, hits=hits, pass_no=ctx.pass_no)


def _gate(spec: EntrySpec, timers: BookTimers, ctx: PassContext) -> str | None:
    """Why a CCv3 eligibility decorator keeps the entry out this turn (rule 18), or None."""
    deco = spec.decorators
    count = ctx.assistant_messages
    if deco.activate_only_after is not None and count < deco.activate_only_after:
        return f"@@activate_only_after {deco.activate_only_after}: {count} assistant messages"
    every = deco.activate_only_every
    if every is not None and count % every:
        return f"@@activate_only_every {every}: {count} assistant messages"
    if deco.is_greeting is not None and ctx.greeting_index != deco.is_greeting:
        shown = "unknown" if ctx.greeting_index is None else ctx.greeting_index
        return f"@@is_greeting {deco.is_greeting}: the chat's greeting is {shown}"
    if deco.dont_activate_after_match and spec.index in timers.matched:
        return "@@dont_activate_after_match: already reached the model in this chat"
    return None


def _blocked(
    spec: EntrySpec, timers: BookTimers, ctx: PassContext, recursive: bool
) -> Outcome | None:
    """The checks before activation (disabled, timed effects, decorators, recursion rules)."""
    entry = spec.entry
    if not entry.enabled:
        return _no("disabled", "disabled", ctx)
    sticky = spec.index in timers.sticky
    if timers.delayed(entry):
        return _no(
            "delay",
            f"delay: waits until the chat has {entry.delay} messages (now {timers.length})",
            ctx,
        )
    if timers.on_cooldown(spec.index):
        end = timers.cooldown[spec.index].end
        return _no(
            "cooldown", f"cooldown until the chat has {end} messages (now {timers.length})", ctx
        )
    gate = _gate(spec, timers, ctx)
    if gate is not None:
        return _no("decorator", gate, ctx)
    if sticky:
        return None
    level = spec.delay_level
    if level and not ctx.recursion:
        why = "its book does not recurse" if not recursive else "this is not a recursion pass"
        return _no("recursion", f"delayed until recursion (level {level}); {why}", ctx)
    if level and level > ctx.level:
        return _no("recursion", f"delayed until recursion level {level} (open: {ctx.level})", ctx)
    if ctx.recursion and (entry.exclude_recursion or not recursive):
        why = "excluded from recursion" if entry.exclude_recursion else "its book does not recurse"
        return _no("recursion", f"{why}; cannot activate in recursion pass {ctx.pass_no}", ctx)
    return None


def _forced(spec: EntrySpec, timers: BookTimers, ctx: PassContext) -> Outcome | None:
    """Activation without keys (rules 14, 17; sticky; kept after a match), or a veto."""
    deco = spec.decorators
    if deco.activate:
        return Outcome(None, "@@activate", "decorator", pass_no=ctx.pass_no)
    if deco.dont_activate:
        return _no("decorator", "@@dont_activate", ctx)
    if spec.entry.constant:
        return Outcome(None, "constant", "constant", pass_no=ctx.pass_no)
    sticky = timers.sticky.get(spec.index)
    if sticky is not None:
        reason = f"sticky until the chat has {sticky.end} messages"
        return Outcome(None, reason, "sticky", pass_no=ctx.pass_no)
    if deco.keep_activate_after_match and spec.index in timers.matched:
        reason = "@@keep_activate_after_match: matched earlier in this chat"
        return Outcome(None, reason, "kept", pass_no=ctx.pass_no)
    return None


def evaluate(spec: EntrySpec, scan: BookScan, timers: BookTimers, ctx: PassContext) -> Outcome:
    """Whether ``spec`` activates in this pass."""
    recursive = scan.book.recursive
    index = spec.index
    fast = (
        index in scan.book.plain
        and index not in timers.cooldown
        and (recursive or not ctx.recursion)
    )
    if not fast:
        blocked = _blocked(spec, timers, ctx, recursive)
        if blocked is not None:
            return blocked
    forced = _forced(spec, timers, ctx)
    if forced is not None:
        return forced
    if not spec.primary:
        return _no("no_match", "no keys", ctx)
    return _by_keys(spec, scan, ctx, ctx.recursion and recursive)


def _where(depth: int, recursion: bool) -> str:
    text = f"the last {depth} messages" if depth != 1 else "the last message"
    if depth == 0:
        text = "no chat message (scan depth 0)"
    return f"{text} or recursed content" if recursion else text


def _by_keys(spec: EntrySpec, scan: BookScan, ctx: PassContext, recursion: bool) -> Outcome:
    depth = scan.window_of(spec, ctx.extra_depth)
    primary = scan.present(spec.primary, depth, recursion)
    if not primary:
        return _no("no_match", f"no key matched in {_where(depth, recursion)}", ctx)
    hits = [scan.hit(r, depth, recursion, False) for r in primary]
    score = len(hits)
    if spec.secondary:
        present = scan.present(spec.secondary, depth, recursion)
        failure = _logic_failure(spec, present)
        if failure:
            return _no("secondary", failure, ctx, tuple(hits))
        if spec.logic == AND_ANY or (spec.logic == AND_ALL and len(present) == len(spec.secondary)):
            score += len(present)  # SillyTavern getScore: only positive logic scores
        hits += [scan.hit(r, depth, recursion, True) for r in present]
    for group in spec.additional:
        if not scan.present(group, depth, recursion):
            listed = ", ".join(repr(k) for _, k in group)
            return _no(
                "secondary", f"@@additional_keys: none of {listed} present", ctx, tuple(hits)
            )
    excluded = scan.present(spec.exclude, depth, recursion) if spec.exclude else None
    if excluded:
        return _no("secondary", f"@@exclude_keys: {excluded[0][1]!r} present", ctx, tuple(hits))
    from_chat = any(h.source == "message" and not h.secondary for h in hits)
    cause: Cause = "keyword" if from_chat else "recursion"
    if ctx.extra_depth and from_chat:
        cause = "min_activations"
    reason = hits[0].describe()
    if ctx.extra_depth:
        reason += f" (minimum activations: window widened to {depth} messages)"
    return Outcome(None, reason, cause, tuple(hits), score, ctx.pass_no)


def _logic_failure(spec: EntrySpec, present: list[KeyRef]) -> str | None:
    """Why the secondary logic fails (rule 12), or None when it passes."""
    name = spec.logic_name
    written = [k for _, k in spec.secondary]
    found = {k for _, k in present}
    missing = [k for k in written if k not in found]
    if spec.logic == AND_ANY and not present:
        return f"secondary keys ({name}): none of {_quoted(written)} present"
    if spec.logic == AND_ALL and missing:
        return f"secondary keys ({name}): missing {_quoted(missing)}"
    if spec.logic == NOT_ANY and present:
        return f"secondary keys ({name}): {_quoted(sorted(found))} present"
    if spec.logic == NOT_ALL and not missing:
        return f"secondary keys ({name}): all of {_quoted(written)} present"
    return None


def _quoted(keys: list[str]) -> str:
    return ", ".join(repr(k) for k in keys)
