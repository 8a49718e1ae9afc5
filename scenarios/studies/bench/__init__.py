"""The speed benchmark (:mod:`.cases`) and the peer libraries run beside it (:mod:`.peers`)."""
