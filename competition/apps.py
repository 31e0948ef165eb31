from django.apps import AppConfig


class CompetitionConfig(AppConfig):
    name = "competition"
    verbose_name = "Competition"

    def ready(self) -> None:
        # the events react to a match's end and to a bot made active through their signals
        from bots.transports import human
        from competition.events import receivers  # noqa: F401
        from competition.live.broadcast import human_group
        from competition.plumbing import checks  # noqa: F401  (deploy checks)

        # a human seat reaches its browsers through the group the consumers join
        human.use_seat_groups(human_group)
