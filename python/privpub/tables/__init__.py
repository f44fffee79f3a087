"""Tables: schemas and domains, inputs, counting queries, exact domain counts,
record handling, and columnar table views (in memory or on file)."""
