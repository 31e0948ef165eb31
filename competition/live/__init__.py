"""Live updates: the hub, the broadcasts, the websocket consumers and their routing."""
