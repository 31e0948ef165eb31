"""The server-rendered site: accounts, bots, play (bench and humans), game docs, the home
and match pages, their forms and URLs."""
