"""Days until a new word is found, interactive against one-shot discovery (``ldpsim discover``)."""
