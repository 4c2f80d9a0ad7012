"""The questions on the shop database, with the reference solution that answers each.

A solution is what a good analyst would write in the workbench against a database source:
it asks the database with `sql(query, source="shop")`, letting it join, filter and
aggregate, and only finishes small results in pandas, ending with
`final_answer("@name[value]")`. Its SQL is portable (it runs the same on SQLite,
PostgreSQL and MariaDB): dates are compared with 'YYYY-MM-DD' literals, a month is the
first seven characters of the date cast to text, and divisions are done in Python on the
sums and counts the database returns (integer division and decimal scales differ between
the three). Values come back as Decimal from some drivers, so each one passes through
float() or int() before it is formatted.

`check` is a query whose rows rank the candidates of a "which is the most" question, best
first: the generator refuses a set where the first `top + 1` values are not all distinct,
so that no answer depends on how a tie is broken.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "shop"


@dataclass(frozen=True)
class Spec:
    id: str
    question: str
    constraints: str
    format: str
    concepts: tuple[str, ...]
    level: str
    solution: str
    check: str | None = None
    top: int = 1


TWO = "rounded to two decimal places"
PERCENT = f"a percentage between 0 and 100, {TWO}"
REVENUE = (
    "An order's revenue is the sum of quantity * unit_price over its order_items; returns "
    "do not change it."
)
DELIVERED = "Count only orders whose status is 'delivered'."
IN_2024 = "An order is of 2024 when its order_date falls in 2024."

SPECS: tuple[Spec, ...] = (
    Spec(
        id="shop_customers_without_email",
        question="How many customers have no email address on file?",
        constraints="A customer has no email address when the email is missing (NULL).",
        format='@no_email[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="easy",
        solution="""
rows = sql("SELECT COUNT(*) AS n FROM customers WHERE email IS NULL", source="shop")
final_answer(f"@no_email[{int(rows['n'][0])}]")
""",
    ),
    Spec(
        id="shop_orders_2024",
        question="How many orders were placed in 2024, and how many of those were cancelled?",
        constraints=f"{IN_2024} A cancelled order has the status 'cancelled'.",
        format='@orders_2024[count] @cancelled_2024[count] where each "count" is an integer.',
        concepts=("Summary Statistics",),
        level="easy",
        solution='''
rows = sql("""
SELECT COUNT(*) AS orders,
       SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS cancelled
FROM orders
WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01'
""", source="shop")
final_answer(f"@orders_2024[{int(rows['orders'][0])}] @cancelled_2024[{int(rows['cancelled'][0])}]")
''',
    ),
    Spec(
        id="shop_revenue_2023",
        question="What revenue did the delivered orders placed in 2023 bring in?",
        constraints=f"{REVENUE} {DELIVERED}",
        format=f'@revenue_2023[total] where "total" is the revenue, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution='''
rows = sql("""
SELECT SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered' AND o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'
""", source="shop")
final_answer(f"@revenue_2023[{float(rows['revenue'][0]):.2f}]")
''',
    ),
    Spec(
        id="shop_region_most_customers",
        question="Which region has the most customers?",
        constraints="Count every customer, whether or not they have ordered.",
        format='@region[name] where "name" is the region\'s name as written in the data.',
        concepts=("Summary Statistics",),
        level="easy",
        solution='''
rows = sql("""
SELECT r.name, COUNT(*) AS customers
FROM customers c JOIN regions r ON r.region_id = c.region_id
GROUP BY r.name
ORDER BY customers DESC
LIMIT 1
""", source="shop")
final_answer(f"@region[{rows['name'][0]}]")
''',
        check="""
SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.region_id = c.region_id
GROUP BY r.name ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_top_category_2024",
        question=(
            "Which product category earned the most from delivered orders of 2024, and how "
            "much did it earn?"
        ),
        constraints=(
            f"{REVENUE} {DELIVERED} {IN_2024} A product's category is the one its "
            "category_id names (not the department above it)."
        ),
        format=(
            '@top_category[name] @top_category_revenue[total] where "name" is the category '
            f'as written in the data and "total" its revenue, {TWO}.'
        ),
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
rows = sql("""
SELECT c.name, SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
JOIN categories c ON c.category_id = p.category_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY c.name
ORDER BY revenue DESC
LIMIT 1
""", source="shop")
name, revenue = rows["name"][0], float(rows["revenue"][0])
final_answer(f"@top_category[{name}] @top_category_revenue[{revenue:.2f}]")
''',
        check="""
SELECT c.name, SUM(oi.quantity * oi.unit_price) FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
JOIN categories c ON c.category_id = p.category_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY c.name ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_electronics_share_2024",
        question=(
            "What share of the revenue of delivered orders of 2024 came from products of the "
            "Electronics department?"
        ),
        constraints=(
            f"{REVENUE} {DELIVERED} {IN_2024} Categories form a tree: a product's category "
            "has a parent_id pointing at its department."
        ),
        format=f'@electronics_share[percent] where "percent" is {PERCENT}.',
        concepts=("Summary Statistics", "Feature Engineering"),
        level="medium",
        solution='''
rows = sql("""
SELECT d.name AS department, SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
JOIN categories c ON c.category_id = p.category_id
JOIN categories d ON d.category_id = c.parent_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY d.name
""", source="shop")
revenue = {name: float(value) for name, value in zip(rows["department"], rows["revenue"])}
share = 100 * revenue["Electronics"] / sum(revenue.values())
final_answer(f"@electronics_share[{share:.2f}]")
''',
    ),
    Spec(
        id="shop_average_order_value",
        question="What is the average value of a delivered order?",
        constraints=(
            f"{REVENUE} {DELIVERED} Average over the delivered orders of every year, each "
            "order's revenue counted once."
        ),
        format=f'@average_order_value[value] where "value" is the mean revenue, {TWO}.',
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
rows = sql("""
SELECT SUM(t.revenue) AS total, COUNT(*) AS orders
FROM (
    SELECT o.order_id, SUM(oi.quantity * oi.unit_price) AS revenue
    FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
    WHERE o.status = 'delivered'
    GROUP BY o.order_id
) t
""", source="shop")
value = float(rows["total"][0]) / int(rows["orders"][0])
final_answer(f"@average_order_value[{value:.2f}]")
''',
    ),
    Spec(
        id="shop_customers_without_orders",
        question="How many customers have never placed an order?",
        constraints="Any order counts, whatever its status.",
        format='@never_ordered[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="easy",
        solution='''
rows = sql("""
SELECT COUNT(*) AS n
FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id
WHERE o.order_id IS NULL
""", source="shop")
final_answer(f"@never_ordered[{int(rows['n'][0])}]")
''',
    ),
    Spec(
        id="shop_top_products_units_2024",
        question="Which three products sold the most units in 2024?",
        constraints=(
            f"Sum the quantity of the order_items of every order of 2024 that was not "
            f"cancelled. {IN_2024}"
        ),
        format=(
            "@first_product[name] @second_product[name] @third_product[name] where each "
            '"name" is a product\'s name as written in the data, the best-selling first.'
        ),
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
rows = sql("""
SELECT p.name, SUM(oi.quantity) AS units
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
WHERE o.status <> 'cancelled' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY p.name
ORDER BY units DESC
LIMIT 3
""", source="shop")
first, second, third = rows["name"]
final_answer(f"@first_product[{first}] @second_product[{second}] @third_product[{third}]")
''',
        check="""
SELECT p.name, SUM(oi.quantity) FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
WHERE o.status <> 'cancelled' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY p.name ORDER BY 2 DESC
""",
        top=3,
    ),
    Spec(
        id="shop_channel_cancellations",
        question="Which sales channel has the highest cancellation rate, and what is that rate?",
        constraints=(
            "A channel's cancellation rate is its orders with the status 'cancelled' divided "
            "by all its orders, over every year."
        ),
        format=(
            '@channel[name] @cancellation_rate[percent] where "name" is the channel as written '
            f'in the data and "percent" is {PERCENT}.'
        ),
        concepts=("Summary Statistics", "Feature Engineering"),
        level="medium",
        solution='''
rows = sql("""
SELECT channel, COUNT(*) AS orders,
       SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS cancelled
FROM orders
GROUP BY channel
""", source="shop")
counts = zip(rows["channel"], rows["orders"], rows["cancelled"])
rates = {channel: 100 * int(k) / int(n) for channel, n, k in counts}
channel = max(rates, key=rates.get)
final_answer(f"@channel[{channel}] @cancellation_rate[{rates[channel]:.2f}]")
''',
        check="""
SELECT channel, SUM(CASE WHEN status = 'cancelled' THEN 1.0 ELSE 0 END) / COUNT(*)
FROM orders GROUP BY channel ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_days_to_ship_2024",
        question=(
            "On average, how many days passed between ordering and shipping for the orders "
            "of 2024 that have shipped?"
        ),
        constraints=(
            f"{IN_2024} Take the orders with a shipped_date; a day's difference is "
            "shipped_date minus order_date in whole days."
        ),
        format=f'@days_to_ship[days] where "days" is the mean, {TWO}.',
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution='''
import pandas as pd
# Date arithmetic differs between databases: fetch the two dates, subtract in pandas.
rows = sql("""
SELECT order_date, shipped_date FROM orders
WHERE shipped_date IS NOT NULL AND order_date >= '2024-01-01' AND order_date < '2025-01-01'
""", source="shop")
days = (pd.to_datetime(rows["shipped_date"]) - pd.to_datetime(rows["order_date"])).dt.days
final_answer(f"@days_to_ship[{days.mean():.2f}]")
''',
    ),
    Spec(
        id="shop_best_month_2023",
        question=(
            "Which month of 2023 brought in the most revenue from delivered orders, and how much?"
        ),
        constraints=f"{REVENUE} {DELIVERED} A month is the calendar month of the order_date.",
        format=(
            '@best_month[month] @best_month_revenue[total] where "month" is written YYYY-MM '
            f'and "total" is its revenue, {TWO}.'
        ),
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution='''
rows = sql("""
SELECT SUBSTR(CAST(o.order_date AS CHAR(10)), 1, 7) AS month,
       SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered' AND o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'
GROUP BY SUBSTR(CAST(o.order_date AS CHAR(10)), 1, 7)
ORDER BY revenue DESC
LIMIT 1
""", source="shop")
month, revenue = rows["month"][0], float(rows["revenue"][0])
final_answer(f"@best_month[{month}] @best_month_revenue[{revenue:.2f}]")
''',
        check="""
SELECT SUBSTR(o.order_date, 1, 7), SUM(oi.quantity * oi.unit_price)
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered' AND o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'
GROUP BY 1 ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_customers_both_years",
        question="How many customers placed orders in both 2023 and 2024?",
        constraints="Any order counts, whatever its status; a customer counts once.",
        format='@both_years[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="medium",
        solution='''
rows = sql("""
SELECT COUNT(DISTINCT customer_id) AS n
FROM orders
WHERE order_date >= '2023-01-01' AND order_date < '2024-01-01'
  AND customer_id IN (
      SELECT customer_id FROM orders
      WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01'
  )
""", source="shop")
final_answer(f"@both_years[{int(rows['n'][0])}]")
''',
    ),
    Spec(
        id="shop_refunds_without_reason",
        question=("How many returns have no recorded reason, and how much was refunded for them?"),
        constraints="A return has no recorded reason when its reason is missing (NULL).",
        format=(
            '@returns_without_reason[count] @refunded_without_reason[total] where "count" is '
            f'an integer and "total" the sum of refund_amount, {TWO}.'
        ),
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="easy",
        solution='''
rows = sql("""
SELECT COUNT(*) AS n, SUM(refund_amount) AS refunded FROM returns WHERE reason IS NULL
""", source="shop")
n, refunded = int(rows["n"][0]), float(rows["refunded"][0])
final_answer(f"@returns_without_reason[{n}] @refunded_without_reason[{refunded:.2f}]")
''',
    ),
    Spec(
        id="shop_category_most_returns",
        question="Which product category had the most returned order lines?",
        constraints=(
            "A return names the order line it returns by order_id and line_no; count the "
            "returns of each category of the returned product."
        ),
        format='@most_returned_category[name] where "name" is the category as written in the data.',
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
rows = sql("""
SELECT c.name, COUNT(*) AS returned
FROM returns r
JOIN order_items oi ON oi.order_id = r.order_id AND oi.line_no = r.line_no
JOIN products p ON p.product_id = oi.product_id
JOIN categories c ON c.category_id = p.category_id
GROUP BY c.name
ORDER BY returned DESC
LIMIT 1
""", source="shop")
final_answer(f"@most_returned_category[{rows['name'][0]}]")
''',
        check="""
SELECT c.name, COUNT(*) FROM returns r
JOIN order_items oi ON oi.order_id = r.order_id AND oi.line_no = r.line_no
JOIN products p ON p.product_id = oi.product_id
JOIN categories c ON c.category_id = p.category_id
GROUP BY c.name ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_eco_products",
        question=(
            "How many products carry the eco tag, and what revenue did they bring in from "
            "delivered orders of 2024?"
        ),
        constraints=(
            f"Products and tags are linked in product_tags. {REVENUE} {DELIVERED} {IN_2024}"
        ),
        format=(
            '@eco_products[count] @eco_revenue_2024[total] where "count" is an integer and '
            f'"total" the revenue, {TWO}.'
        ),
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
eco = """SELECT pt.product_id FROM product_tags pt JOIN tags t ON t.tag_id = pt.tag_id
WHERE t.name = 'eco'"""
count = sql(f"SELECT COUNT(*) AS n FROM ({eco}) e", source="shop")
revenue = sql(f"""
SELECT SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
  AND oi.product_id IN ({eco})
""", source="shop")
n, total = int(count["n"][0]), float(revenue["revenue"][0])
final_answer(f"@eco_products[{n}] @eco_revenue_2024[{total:.2f}]")
''',
    ),
    Spec(
        id="shop_tag_most_revenue",
        question="Which tag's products earned the most from delivered orders over all years?",
        constraints=(
            f"{REVENUE} {DELIVERED} A product with several tags counts toward each of them."
        ),
        format='@top_tag[name] where "name" is the tag as written in the data.',
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
rows = sql("""
SELECT t.name, SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN product_tags pt ON pt.product_id = oi.product_id
JOIN tags t ON t.tag_id = pt.tag_id
WHERE o.status = 'delivered'
GROUP BY t.name
ORDER BY revenue DESC
LIMIT 1
""", source="shop")
final_answer(f"@top_tag[{rows['name'][0]}]")
''',
        check="""
SELECT t.name, SUM(oi.quantity * oi.unit_price) FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN product_tags pt ON pt.product_id = oi.product_id
JOIN tags t ON t.tag_id = pt.tag_id
WHERE o.status = 'delivered' GROUP BY t.name ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_referred_customers",
        question=(
            "How many customers were referred by another customer, and how many of those "
            "have placed at least one order?"
        ),
        constraints=(
            "referred_by holds the id of the customer who referred them, or nothing. Any "
            "order counts, whatever its status."
        ),
        format=('@referred[count] @referred_ordering[count] where each "count" is an integer.'),
        concepts=("Data Preprocessing",),
        level="medium",
        solution='''
rows = sql("""
SELECT COUNT(*) AS referred,
       SUM(CASE WHEN EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id)
           THEN 1 ELSE 0 END) AS ordering
FROM customers c
WHERE c.referred_by IS NOT NULL
""", source="shop")
referred, ordering = int(rows["referred"][0]), int(rows["ordering"][0])
final_answer(f"@referred[{referred}] @referred_ordering[{ordering}]")
''',
    ),
    Spec(
        id="shop_margin_2024",
        question=(
            "What was the gross margin of the delivered orders of 2024, as a share of their "
            "revenue?"
        ),
        constraints=(
            f"{REVENUE} {DELIVERED} {IN_2024} The margin is the revenue minus quantity * "
            "unit_cost of each line's product, divided by the revenue."
        ),
        format=f'@gross_margin[percent] where "percent" is {PERCENT}.',
        concepts=("Summary Statistics", "Feature Engineering"),
        level="medium",
        solution='''
rows = sql("""
SELECT SUM(oi.quantity * oi.unit_price) AS revenue, SUM(oi.quantity * p.unit_cost) AS cost
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
""", source="shop")
revenue, cost = float(rows["revenue"][0]), float(rows["cost"][0])
final_answer(f"@gross_margin[{100 * (revenue - cost) / revenue:.2f}]")
''',
    ),
    Spec(
        id="shop_top_customer",
        question="Which customer spent the most on delivered orders, and how much?",
        constraints=f"{REVENUE} {DELIVERED} Over every year.",
        format=(
            '@customer_id[id] @customer_spent[total] where "id" is the customer_id (an '
            f'integer) and "total" their spending, {TWO}.'
        ),
        concepts=("Summary Statistics",),
        level="medium",
        solution='''
rows = sql("""
SELECT o.customer_id, SUM(oi.quantity * oi.unit_price) AS spent
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered'
GROUP BY o.customer_id
ORDER BY spent DESC
LIMIT 1
""", source="shop")
customer, spent = int(rows["customer_id"][0]), float(rows["spent"][0])
final_answer(f"@customer_id[{customer}] @customer_spent[{spent:.2f}]")
''',
        check="""
SELECT o.customer_id, SUM(oi.quantity * oi.unit_price) FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered' GROUP BY o.customer_id ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_business_customer_age",
        question="What is the average age of the business customers whose birth year is known?",
        constraints=(
            "A business customer's segment is 'business'. Take a customer's age as 2025 minus "
            "their birth_year; leave out customers without a birth_year."
        ),
        format=f'@business_age[age] where "age" is the mean age, {TWO}.',
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="easy",
        solution='''
rows = sql("""
SELECT SUM(2025 - birth_year) AS years, COUNT(birth_year) AS known
FROM customers
WHERE segment = 'business'
""", source="shop")
final_answer(f"@business_age[{int(rows['years'][0]) / int(rows['known'][0]):.2f}]")
''',
    ),
    Spec(
        id="shop_coupons_2024",
        question=(
            "What percentage of the orders of 2024 used a coupon, and which coupon code was "
            "used most that year?"
        ),
        constraints=f"{IN_2024} An order used a coupon when its coupon_code is not missing.",
        format=(
            f'@coupon_share[percent] @top_coupon[code] where "percent" is {PERCENT} and '
            '"code" the coupon code as written in the data.'
        ),
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="medium",
        solution='''
rows = sql("""
SELECT coupon_code, COUNT(*) AS orders
FROM orders
WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01'
GROUP BY coupon_code
""", source="shop")
used = rows[rows["coupon_code"].notna()].sort_values("orders", ascending=False)
share = 100 * int(used["orders"].sum()) / int(rows["orders"].sum())
final_answer(f"@coupon_share[{share:.2f}] @top_coupon[{used['coupon_code'].iloc[0]}]")
''',
        check="""
SELECT coupon_code, COUNT(*) FROM orders
WHERE coupon_code IS NOT NULL AND order_date >= '2024-01-01' AND order_date < '2025-01-01'
GROUP BY coupon_code ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_discontinued_units",
        question=(
            "How many products have been discontinued, and what share of all units sold "
            "were units of those products?"
        ),
        constraints=(
            "A product is discontinued when its discontinued_on is set. Units sold are the "
            "quantity of the order_items of every order that was not cancelled, over all years."
        ),
        format=(
            '@discontinued_products[count] @discontinued_unit_share[percent] where "count" is '
            f'an integer and "percent" is {PERCENT}.'
        ),
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="medium",
        solution='''
products = sql(
    "SELECT COUNT(*) AS n FROM products WHERE discontinued_on IS NOT NULL", source="shop"
)
units = sql("""
SELECT SUM(CASE WHEN p.discontinued_on IS NOT NULL THEN oi.quantity ELSE 0 END) AS discontinued,
       SUM(oi.quantity) AS all_units
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN products p ON p.product_id = oi.product_id
WHERE o.status <> 'cancelled'
""", source="shop")
share = 100 * int(units["discontinued"][0]) / int(units["all_units"][0])
final_answer(
    f"@discontinued_products[{int(products['n'][0])}] @discontinued_unit_share[{share:.2f}]"
)
''',
    ),
    Spec(
        id="shop_loyal_customers",
        question="How many customers have at least five delivered orders?",
        constraints=DELIVERED,
        format='@loyal_customers[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="easy",
        solution='''
rows = sql("""
SELECT COUNT(*) AS n FROM (
    SELECT customer_id FROM orders WHERE status = 'delivered'
    GROUP BY customer_id HAVING COUNT(*) >= 5
) loyal
""", source="shop")
final_answer(f"@loyal_customers[{int(rows['n'][0])}]")
''',
    ),
    Spec(
        id="shop_revenue_growth",
        question=("By what percentage did the revenue of delivered orders grow from 2023 to 2024?"),
        constraints=(
            f"{REVENUE} {DELIVERED} Growth is (revenue of 2024 - revenue of 2023) / revenue "
            "of 2023, by order_date."
        ),
        format=f'@revenue_growth[percent] where "percent" is the growth in percent, {TWO}.',
        concepts=("Summary Statistics", "Feature Engineering"),
        level="medium",
        solution='''
rows = sql("""
SELECT SUM(CASE WHEN o.order_date < '2024-01-01'
                THEN oi.quantity * oi.unit_price ELSE 0 END) AS y2023,
       SUM(CASE WHEN o.order_date >= '2024-01-01'
                THEN oi.quantity * oi.unit_price ELSE 0 END) AS y2024
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status = 'delivered' AND o.order_date >= '2023-01-01' AND o.order_date < '2025-01-01'
""", source="shop")
before, after = float(rows["y2023"][0]), float(rows["y2024"][0])
final_answer(f"@revenue_growth[{100 * (after - before) / before:.2f}]")
''',
    ),
    Spec(
        id="shop_app_lines_per_order",
        question="How many lines does an order placed through the app have on average?",
        constraints=(
            "An order's lines are its rows in order_items; the app channel is 'app'. Every "
            "order counts, whatever its status."
        ),
        format=f'@lines_per_app_order[lines] where "lines" is the mean, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution='''
rows = sql("""
SELECT COUNT(*) AS line_count, COUNT(DISTINCT o.order_id) AS order_count
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.channel = 'app'
""", source="shop")
mean = int(rows["line_count"][0]) / int(rows["order_count"][0])
final_answer(f"@lines_per_app_order[{mean:.2f}]")
''',
    ),
    Spec(
        id="shop_region_revenue_per_customer",
        question=(
            "Which region had the highest revenue per customer from delivered orders of 2024, "
            "and what was it?"
        ),
        constraints=(
            f"{REVENUE} {DELIVERED} {IN_2024} Divide a region's revenue by the number of "
            "all its customers, whether they ordered in 2024 or not."
        ),
        format=(
            '@region_per_customer[name] @revenue_per_customer[value] where "name" is the '
            f'region as written in the data and "value" its revenue per customer, {TWO}.'
        ),
        concepts=("Summary Statistics", "Feature Engineering"),
        level="hard",
        solution='''
revenue = sql("""
SELECT r.name, SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN customers c ON c.customer_id = o.customer_id
JOIN regions r ON r.region_id = c.region_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY r.name
""", source="shop")
customers = sql("""
SELECT r.name, COUNT(*) AS customers
FROM customers c JOIN regions r ON r.region_id = c.region_id
GROUP BY r.name
""", source="shop")
both = revenue.merge(customers, on="name")
both["per_customer"] = both["revenue"].astype(float) / both["customers"].astype(int)
best = both.sort_values("per_customer", ascending=False).iloc[0]
name, value = best["name"], best["per_customer"]
final_answer(f"@region_per_customer[{name}] @revenue_per_customer[{value:.2f}]")
''',
        check="""
SELECT r.name, SUM(oi.quantity * oi.unit_price) / (
    SELECT COUNT(*) FROM customers c2 WHERE c2.region_id = r.region_id)
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
JOIN customers c ON c.customer_id = o.customer_id
JOIN regions r ON r.region_id = c.region_id
WHERE o.status = 'delivered' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY r.region_id, r.name ORDER BY 2 DESC
""",
    ),
    Spec(
        id="shop_first_orders_2024",
        question="How many customers placed their first order in 2024?",
        constraints=(
            "A customer's first order is their earliest order_date, whatever the order's status."
        ),
        format='@new_customers_2024[count] where "count" is an integer.',
        concepts=("Feature Engineering",),
        level="medium",
        solution='''
rows = sql("""
SELECT COUNT(*) AS n FROM (
    SELECT customer_id, MIN(order_date) AS first_order FROM orders GROUP BY customer_id
) f
WHERE f.first_order >= '2024-01-01' AND f.first_order < '2025-01-01'
""", source="shop")
final_answer(f"@new_customers_2024[{int(rows['n'][0])}]")
''',
    ),
    Spec(
        id="shop_open_orders",
        question=(
            "How many orders are still open (being processed or shipped but not yet "
            "delivered), and what are they worth?"
        ),
        constraints=f"Open orders have the status 'processing' or 'shipped'. {REVENUE}",
        format=(
            '@open_orders[count] @open_value[total] where "count" is an integer and "total" '
            f"their revenue, {TWO}."
        ),
        concepts=("Summary Statistics",),
        level="easy",
        solution='''
rows = sql("""
SELECT COUNT(DISTINCT o.order_id) AS n, SUM(oi.quantity * oi.unit_price) AS worth
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
WHERE o.status IN ('processing', 'shipped')
""", source="shop")
final_answer(f"@open_orders[{int(rows['n'][0])}] @open_value[{float(rows['worth'][0]):.2f}]")
''',
    ),
)
