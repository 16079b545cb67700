"""A small end-to-end Ember pipeline: generate data, register views, join and aggregate.

Run it with ``python examples/pipeline.py``. It writes three seeded Parquet files (customers,
products, a few thousand orders) to a temporary directory, registers them with
``CREATE TEMP VIEW ... USING parquet``, then answers the same questions with SQL and with the
PySpark-style DataFrame API (joins, aggregates, subqueries, ROLLUP subtotals, window functions),
printing each result with ``show()``, and ends by saving monthly revenue with ``saveAsTable`` as a
table partitioned by region (in a warehouse inside the temporary directory) and querying it back.

``python examples/pipeline.py --runtime spark [--master URL]`` runs the same pipeline on Apache
Spark: Ember plans each query, and a SparkSession (``local[2]`` unless ``--master`` names a
cluster) reads the Parquet files with Spark's reader and runs the plan's shuffles, broadcasts
and operators.  The printed tables are the same.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ember
from ember import functions as F

SEED = 7
N_CUSTOMERS = 200
N_PRODUCTS = 60
N_ORDERS = 5000


def generate(directory: str) -> dict[str, str]:
    """Write customers, products and orders as Parquet files; returns their paths."""
    rng = np.random.default_rng(SEED)
    regions = np.array(["north", "south", "east", "west"])
    categories = np.array(["books", "games", "garden", "kitchen", "toys"])

    customers = pa.table({
        "customer_id": pa.array(np.arange(1, N_CUSTOMERS + 1, dtype=np.int32)),
        "name": pa.array([f"customer-{i:03d}" for i in range(1, N_CUSTOMERS + 1)]),
        "region": pa.array(regions[rng.integers(0, len(regions), N_CUSTOMERS)]),
        "signup_date": pa.array(
            np.datetime64("2022-01-01") + rng.integers(0, 700, N_CUSTOMERS).astype("timedelta64[D]")
        ),
    })
    products = pa.table({
        "product_id": pa.array(np.arange(1, N_PRODUCTS + 1, dtype=np.int32)),
        "category": pa.array(categories[rng.integers(0, len(categories), N_PRODUCTS)]),
        "price": pa.array(np.round(rng.uniform(2, 120, N_PRODUCTS), 2)),
    })
    # Orders reference 80% of the customers and all but a handful of products, so the anti join
    # and NOT IN below have something to find.
    active = rng.choice(np.arange(1, N_CUSTOMERS + 1), size=int(N_CUSTOMERS * 0.8), replace=False)
    sold = np.arange(1, N_PRODUCTS - 4, dtype=np.int32)
    start = np.datetime64("2024-01-01T00:00:00", "us")
    orders = pa.table({
        "order_id": pa.array(np.arange(1, N_ORDERS + 1, dtype=np.int64)),
        "customer_id": pa.array(rng.choice(active, N_ORDERS).astype(np.int32)),
        "product_id": pa.array(rng.choice(sold, N_ORDERS).astype(np.int32)),
        "quantity": pa.array(rng.integers(1, 6, N_ORDERS).astype(np.int32)),
        "ordered_at": pa.array(
            start + rng.integers(0, 365 * 24 * 3600, N_ORDERS).astype("timedelta64[s]"),
            pa.timestamp("us", tz="UTC"),
        ),
    })
    paths = {}
    for name, table in (("customers", customers), ("products", products), ("orders", orders)):
        paths[name] = os.path.join(directory, f"{name}.parquet")
        pq.write_table(table, paths[name])
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Ember's example pipeline")
    ap.add_argument("--runtime", choices=("local", "spark"), default="local")
    ap.add_argument("--master", default=None, help="Spark master URL (with --runtime spark)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ember-pipeline-") as tmp:
        warehouse = os.path.join(tmp, "warehouse")
        spark = ember.Session({"spark.sql.warehouse.dir": warehouse},
                              runtime=args.runtime, master=args.master)
        if args.runtime == "spark":
            print(f"Running on Apache Spark {spark.spark_session.version} "
                  f"(master {spark.spark_session.sparkContext.master})\n")
        paths = generate(tmp)
        for name, path in paths.items():
            spark.sql(f"CREATE TEMP VIEW {name} USING parquet OPTIONS (path '{path}')")

        print("Revenue by region (SQL: inner joins, count(DISTINCT), FILTER):")
        spark.sql("""
            SELECT c.region,
                   count(DISTINCT o.customer_id)                                AS buyers,
                   count(*)                                                     AS orders,
                   round(sum(o.quantity * p.price), 2)                          AS revenue,
                   round(sum(o.quantity * p.price) FILTER (WHERE p.category = 'books'), 2)
                                                                                AS book_revenue
            FROM orders o
            JOIN customers c ON o.customer_id = c.customer_id
            JOIN products p  ON o.product_id = p.product_id
            GROUP BY c.region
            ORDER BY c.region
        """).show()

        print("The same with the DataFrame API:")
        orders, customers, products = (spark.table(n) for n in ("orders", "customers", "products"))
        line_total = F.col("quantity") * F.col("price")
        (orders.join(customers, "customer_id")
               .join(products, "product_id")
               .groupBy("region")
               .agg(F.countDistinct("customer_id").alias("buyers"),
                    F.count("*").alias("orders"),
                    F.round(F.sum(line_total), 2).alias("revenue"),
                    F.round(F.sum(F.when(F.col("category") == "books", line_total)), 2)
                     .alias("book_revenue"))
               .orderBy("region")
               .show())

        print("Customers who never ordered (SQL LEFT ANTI JOIN), first rows:")
        spark.sql("""
            SELECT c.customer_id, c.name, c.region
            FROM customers c LEFT ANTI JOIN orders o ON c.customer_id = o.customer_id
            ORDER BY c.customer_id
        """).show(5)

        never = customers.join(orders, "customer_id", "left_anti")
        print(f"DataFrame API agrees: {never.count()} customers without orders\n")

        print("Products never sold (NOT IN subquery):")
        spark.sql("""
            SELECT product_id, category, price
            FROM products
            WHERE product_id NOT IN (SELECT product_id FROM orders)
            ORDER BY product_id
        """).show()

        print("Top category-months of 2024 by units sold (DataFrame API, two grouping keys):")
        (orders.join(products, "product_id")
               .withColumn("month", F.month("ordered_at"))
               .groupBy("category", "month")
               .agg(F.sum("quantity").alias("units"))
               .orderBy(F.col("units").desc(), "category")
               .show(5))

        print("Revenue by region and category with subtotals (ROLLUP, grouping_id()):")
        spark.sql("""
            SELECT c.region, p.category, round(sum(o.quantity * p.price), 2) AS revenue,
                   grouping_id() AS level
            FROM orders o
            JOIN customers c ON o.customer_id = c.customer_id
            JOIN products p  ON o.product_id = p.product_id
            GROUP BY ROLLUP(c.region, p.category)
            HAVING grouping_id() > 0
            ORDER BY level, c.region
        """).show()

        print("Each region's best customers and their share (window functions):")
        spark.sql("""
            SELECT region, name, spent,
                   rank() OVER (PARTITION BY region ORDER BY spent DESC)        AS rank,
                   round(100 * spent / sum(spent) OVER (PARTITION BY region), 2) AS pct_of_region
            FROM (SELECT c.region, c.name, round(sum(o.quantity * p.price), 2) AS spent
                  FROM orders o
                  JOIN customers c ON o.customer_id = c.customer_id
                  JOIN products p  ON o.product_id = p.product_id
                  GROUP BY c.region, c.name)
            QUALIFY rank <= 2
            ORDER BY region, rank, name
        """).show()

        print("Monthly revenue saved as a table partitioned by region, then read back:")
        (orders.join(customers, "customer_id")
               .join(products, "product_id")
               .withColumn("month", F.month("ordered_at"))
               .groupBy("region", "month")
               .agg(F.round(F.sum(line_total), 2).alias("revenue"))
               .write.mode("overwrite").partitionBy("region").saveAsTable("monthly_revenue"))
        table_dir = os.path.join(warehouse, "monthly_revenue")
        print("  partition directories:", ", ".join(
            sorted(d for d in os.listdir(table_dir) if not d.startswith(("_", ".")))))
        spark.sql("""
            SELECT region, count(*) AS months, round(sum(revenue), 2) AS revenue,
                   max_by(month, revenue) AS best_month
            FROM monthly_revenue
            WHERE region IN ('north', 'west')
            GROUP BY region
            ORDER BY region
        """).show()
        print(f"(generated {N_ORDERS} orders, seed {SEED})")


if __name__ == "__main__":
    main()
