"""Play from here: the viewer's fork form (checked by ``create_fork``, as for the API)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render

from competition.matches.fork import create_fork
from competition.models import Match
from competition.models.bots import Bot, BotStatus, EndpointKind
from games import get_game


class ForkForm(forms.Form):
    """The turn to start from and one bot per seat: the origin's, or one of the user's."""

    turn = forms.IntegerField(min_value=0, label="From the position after turn")

    def __init__(self, *args, user, origin: Match, participants, **kwargs):
        super().__init__(*args, **kwargs)
        seated = [p.bot for p in participants]
        mine = (
            Bot.objects.filter(owner_id=user.pk, game=origin.game, status=BotStatus.ACTIVE)
            .exclude(kind__in=EndpointKind.people())
            .exclude(pk__in=[b.pk for b in seated])
            .order_by("name")
        )
        choices = [(b.pk, f"{b.name} ({b.owner_name})") for b in seated]
        choices = list(dict(choices).items()) + [(b.pk, f"{b.name} (yours)") for b in mine]
        for p in participants:
            self.fields[f"seat_{p.seat}"] = forms.TypedChoiceField(
                coerce=int, choices=choices, initial=p.bot_id, label=f"Seat {p.seat}"
            )
        self.seat_count = len(participants)

    def seats(self) -> list[int]:
        return [self.cleaned_data[f"seat_{seat}"] for seat in range(self.seat_count)]


@login_required
def match_fork(request, pk: int):
    """GET: the form (``?turn=N`` from the viewer); POST: create the fork and open it."""
    origin = get_object_or_404(Match.objects.visible_to(request.user), pk=pk)  # not a hidden one
    game = get_game(origin.game)
    participants = list(origin.participants.select_related("bot", "bot__owner").order_by("seat"))
    if not participants:
        raise Http404("This match has no seats")
    initial = {"turn": _turn_param(request, origin)}
    kwargs = {"user": request.user, "origin": origin, "participants": participants}
    form = ForkForm(request.POST or None, initial=initial, **kwargs)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                match = create_fork(request.user, origin, form.cleaned_data["turn"], form.seats())
            except (ValidationError, PermissionDenied) as exc:  # TooManyMatches is one
                messages = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
                form.add_error(None, messages)
                status = 403 if isinstance(exc, PermissionDenied) else 400
            else:
                return redirect("match-detail", pk=match.pk)
    context = {"origin": origin, "game": game, "participants": participants, "form": form}
    return render(request, "match_fork.html", context, status=status)


def _turn_param(request, origin: Match) -> int:
    raw = request.GET.get("turn", "")
    turn = int(raw) if raw.isdigit() and len(raw) < 10 else origin.turn_count
    return min(turn, origin.turn_count)
