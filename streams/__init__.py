"""evidence-chain: the stations (pure rules) and the stream workers that wire them to Kafka and Redis."""
