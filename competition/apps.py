from django.apps import AppConfig


class CompetitionConfig(AppConfig):
    name = "competition"
    verbose_name = "Competition"

    def ready(self) -> None:
        # the events react to a match's end through the lifecycle's signal
        from competition.events import receivers  # noqa: F401
