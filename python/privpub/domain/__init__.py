"""What a value means: attributes and their domains, schemas and tuple codes,
and how a table's columns become domain indices. The bottom floor above core:
it imports nothing else of privpub, and every other floor reads values through it."""
