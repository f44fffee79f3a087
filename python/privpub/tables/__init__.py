"""Table releases: PublishedView and estimation from it, record handling,
marginals, confidence intervals, Dask releases. The release file and the rows
it holds are ``privpub.viewfile``; queries and domain counts are ``privpub.counting``."""
