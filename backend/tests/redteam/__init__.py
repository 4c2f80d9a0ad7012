"""The red-team suite: hostile code through the real query API, in every sandbox mode."""
