from django.http import Http404, JsonResponse
from django.shortcuts import render

from bots.models import Bot, BotStatus
from games import all_games, get_game


def home(request):
    games = [
        {
            "game": game,
            "bots": Bot.objects.for_game(game.slug).filter(status=BotStatus.ACTIVE).count(),
        }
        for game in all_games()
    ]
    return render(request, "home.html", {"games": games})


def game_detail(request, slug: str):
    try:
        game = get_game(slug)
    except KeyError:
        raise Http404("No such game") from None
    bots = Bot.objects.for_game(slug).select_related("owner")
    return render(request, "game_detail.html", {"game": game, "bots": bots, "info": game.describe()})


def healthz(request):
    return JsonResponse({"ok": True})
