"""Tables: schemas and domains, record handling, columnar table views (in
memory or on file) and table releases. Queries and domain counts are
``privpub.counting``."""
