"""The core every mechanism family shares: errors, parameter checks, seeding,
guarantees, the release contract and Parquet storage. Depends on nothing
else in privpub."""
