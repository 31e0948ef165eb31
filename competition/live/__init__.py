"""The live fan-out: ``broadcast`` (groups and messages), ``publisher`` (how they leave), ``hub``
(per-process fan-out), ``frames`` (websocket frames written once) and ``relay`` (runner
processes to the web process). The websocket consumers are the web's (``web.consumers``)."""
