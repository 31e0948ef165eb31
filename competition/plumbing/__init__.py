"""The platform's plumbing, below every domain subpackage: serving and admission, the database
threads, event-loop calls, websocket frames, the simulation pool, prepared statements, rate
limits, the games' static files, the start guard with its checks, metrics and logs."""
