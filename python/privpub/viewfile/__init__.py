"""The release file: a table release as one Parquet file (or a Dask release's
directory of part files) with privpub's document in its footer, and the rows
in the form the file holds them.

- :mod:`~privpub.viewfile.document`: the document's fields (format 3), built,
  parsed within bounds, and each part file checked against it;
- :mod:`~privpub.viewfile.digest`: the rows' SHA-256 digest per part and column;
- :mod:`~privpub.viewfile.groupstats`: the sealed statistics of each row group;
- :mod:`~privpub.viewfile.columns`: domain indices ↔ Arrow ↔ pandas columns;
- :mod:`~privpub.viewfile.layout`: part files, the metadata file, the row-group size;
- :mod:`~privpub.viewfile.rows`: TableView and MemoryView, rows as domain indices;
- :mod:`~privpub.viewfile.fileview`: FileView, rows on file, each full pass checked;
- :mod:`~privpub.viewfile.writer`: the writer (rows, digest and stats in one pass);
- :mod:`~privpub.viewfile.reader`: opening a file (document and parts checked), the
  whole read;
- :mod:`~privpub.viewfile.scan` and :mod:`~privpub.viewfile.decide`: pruned counts
  by row group;
- :mod:`~privpub.viewfile.pages`: the one page reader and the footers a view keeps.

It sits below the releases (:mod:`privpub.tables`, whose
:class:`~privpub.PublishedView` holds the envelope, the rows and the
estimation) and above the query language (:mod:`privpub.counting`): it imports
core, domain and counting only.
"""
