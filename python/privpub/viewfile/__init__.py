"""The release file: a table release as one Parquet file (or a Dask release's
directory of part files) with privpub's document in its footer.

- :mod:`~privpub.viewfile.document`: the document's fields (format 3), built,
  parsed within bounds and checked against the files;
- :mod:`~privpub.viewfile.digest`: the rows' SHA-256 digest per part and column;
- :mod:`~privpub.viewfile.groupstats`: the sealed statistics of each row group;
- :mod:`~privpub.viewfile.columns`: domain indices ↔ Arrow ↔ pandas columns;
- :mod:`~privpub.viewfile.layout`: part files, the metadata file, the row-group size.

It sits below the releases (:mod:`privpub.tables`) and above the query
language (:mod:`privpub.counting`): it imports core, domain and counting only.
"""
