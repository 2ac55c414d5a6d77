"""lifecycle: `initialize`, `initialized` and `shutdown`, and the settings (and so the store)
they load and `workspace/didChangeConfiguration` reloads; each calls the features' hooks."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.lifecycle import config, lifecycle


class Lifecycle(LanguageFeature):
    def setup(self) -> None:
        lifecycle.register(self.server)
        config.register(self.server)


__all__ = ["Lifecycle"]
