-- TPC-H Q6, forecasting revenue change (DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24).
-- The discount band 0.06 +/- 0.01 is written out as 0.05 and 0.07 (as DuckDB's own TPC-H
-- queries do): in double arithmetic 0.06 + 0.01 is 0.06999999999999999, which would drop the
-- rows whose discount is exactly 0.07 while DuckDB computes the bound in DECIMAL.
select
    sum(l_extendedprice * l_discount) as revenue
from
    lineitem
where
    l_shipdate >= date '1994-01-01'
    and l_shipdate < date '1994-01-01' + interval '1' year
    and l_discount between 0.05 and 0.07
    and l_quantity < 24;
