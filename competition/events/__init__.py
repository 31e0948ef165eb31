"""Events: ``formats`` (one class per format) and ``pairing`` (pure decisions), ``services`` (the
steps every format shares), ``scheduling``, ``series``, ``standings``, ``header``,
``registration`` (entries and the periodic step), ``receivers`` (the reaction to a match's end
and to a bot made active), ``showcase``, and the standing ladder (``ladder``, ``ladder_sql``)."""
