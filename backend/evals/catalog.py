"""The tasks: DABench's fields, plus the reference solution that computes each answer.

A solution is what a good analyst would write in the workbench: it reads the table by its
file name from the working directory and ends with `final_answer("@name[value]")`. The
generator runs it to fill in the task's answers, and the test suite's scripted model plays
it, so the expected answers are never typed in by hand.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    id: str
    file_name: str
    question: str
    constraints: str
    format: str
    concepts: tuple[str, ...]
    level: str
    solution: str


TWO = "rounded to two decimal places"

SPECS: tuple[Spec, ...] = (
    # -- sales.csv ---------------------------------------------------------------------------
    Spec(
        id="sales_mean_revenue",
        file_name="sales.csv",
        question="What is the mean revenue per order?",
        constraints="Use the revenue column as it is, over all orders.",
        format=f'@mean_revenue[value] where "value" is the mean revenue, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
value = df["revenue"].mean()
final_answer(f"@mean_revenue[{value:.2f}]")
""",
    ),
    Spec(
        id="sales_median_units",
        file_name="sales.csv",
        question="What is the median number of units per order?",
        constraints="Use the units column over all orders.",
        format='@median_units[value] where "value" is the median, rounded to one decimal place.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
value = df["units"].median()
final_answer(f"@median_units[{value:.1f}]")
""",
    ),
    Spec(
        id="sales_west_orders",
        file_name="sales.csv",
        question="How many orders came from the West region?",
        constraints="Count the rows whose region is exactly West.",
        format='@west_orders[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
count = int((df["region"] == "West").sum())
final_answer(f"@west_orders[{count}]")
""",
    ),
    Spec(
        id="sales_top_region",
        file_name="sales.csv",
        question="Which region has the highest total revenue?",
        constraints="Sum the revenue of all orders of each region.",
        format='@top_region[name] where "name" is the region as written in the data.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
name = df.groupby("region")["revenue"].sum().idxmax()
final_answer(f"@top_region[{name}]")
""",
    ),
    Spec(
        id="sales_channel_revenue",
        file_name="sales.csv",
        question="What is the total revenue of the online channel and of the store channel?",
        constraints="Sum the revenue of the orders of each channel.",
        format=(
            '@online_revenue[total] @store_revenue[total] where each "total" is a sum of '
            f"revenue, {TWO}."
        ),
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
totals = df.groupby("channel")["revenue"].sum()
final_answer(f"@online_revenue[{totals['online']:.2f}] @store_revenue[{totals['store']:.2f}]")
""",
    ),
    Spec(
        id="sales_best_month",
        file_name="sales.csv",
        question="Which month of 2025 had the highest total revenue, and what was that total?",
        constraints="Group the orders by the calendar month of their date.",
        format=(
            '@best_month[month] @best_month_revenue[total] where "month" is the month\'s '
            f'number (1-12) and "total" its revenue, {TWO}.'
        ),
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv", parse_dates=["date"])
by_month = df.groupby(df["date"].dt.month)["revenue"].sum()
month = int(by_month.idxmax())
final_answer(f"@best_month[{month}] @best_month_revenue[{by_month.max():.2f}]")
""",
    ),
    Spec(
        id="sales_units_revenue_corr",
        file_name="sales.csv",
        question="How strongly are the units of an order and its revenue correlated?",
        constraints="Compute the Pearson correlation coefficient over all orders.",
        format=f'@correlation_coefficient[r] where "r" is between -1 and 1, {TWO}.',
        concepts=("Correlation Analysis",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
r = df["units"].corr(df["revenue"])
final_answer(f"@correlation_coefficient[{r:.2f}]")
""",
    ),
    Spec(
        id="sales_discounted_share",
        file_name="sales.csv",
        question="What percentage of the orders had a discount?",
        constraints="An order had a discount when its discount is greater than 0.",
        format=f'@discounted_percent[value] where "value" is a percentage (0-100), {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
value = (df["discount"] > 0).mean() * 100
final_answer(f"@discounted_percent[{value:.2f}]")
""",
    ),
    Spec(
        id="sales_priciest_product",
        file_name="sales.csv",
        question="Which product has the highest mean unit price?",
        constraints="Average the unit_price of each product's orders.",
        format='@priciest_product[name] where "name" is the product as written in the data.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
name = df.groupby("product")["unit_price"].mean().idxmax()
final_answer(f"@priciest_product[{name}]")
""",
    ),
    Spec(
        id="sales_q2_store_orders",
        file_name="sales.csv",
        question="How many store orders were placed in the second quarter of 2025?",
        constraints=(
            "The second quarter runs from 1 April to 30 June inclusive; count the orders "
            "whose channel is store."
        ),
        format='@q2_store_orders[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv", parse_dates=["date"])
in_q2 = (df["date"] >= "2025-04-01") & (df["date"] <= "2025-06-30")
count = int((in_q2 & (df["channel"] == "store")).sum())
final_answer(f"@q2_store_orders[{count}]")
""",
    ),
    Spec(
        id="sales_weekend_weekday",
        file_name="sales.csv",
        question="What is the mean revenue of orders placed on weekends, and on weekdays?",
        constraints="Weekends are Saturday and Sunday; every other day is a weekday.",
        format=(
            '@weekend_mean_revenue[value] @weekday_mean_revenue[value] where each "value" '
            f"is a mean revenue, {TWO}."
        ),
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv", parse_dates=["date"])
weekend = df["date"].dt.dayofweek >= 5
final_answer(
    f"@weekend_mean_revenue[{df.loc[weekend, 'revenue'].mean():.2f}] "
    f"@weekday_mean_revenue[{df.loc[~weekend, 'revenue'].mean():.2f}]"
)
""",
    ),
    Spec(
        id="sales_gadget_std",
        file_name="sales.csv",
        question="What is the standard deviation of the revenue of Gadget orders?",
        constraints="Use the sample standard deviation (ddof=1) over the orders of Gadget.",
        format=f'@gadget_revenue_std[value] where "value" is the standard deviation, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("sales.csv")
value = df.loc[df["product"] == "Gadget", "revenue"].std()
final_answer(f"@gadget_revenue_std[{value:.2f}]")
""",
    ),
    # -- employees.csv -----------------------------------------------------------------------
    Spec(
        id="employees_mean_salary",
        file_name="employees.csv",
        question="What is the mean salary of the employees?",
        constraints="Use the salary column over all employees.",
        format=f'@mean_salary[value] where "value" is the mean salary, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
final_answer(f"@mean_salary[{df['salary'].mean():.2f}]")
""",
    ),
    Spec(
        id="employees_top_median_department",
        file_name="employees.csv",
        question="Which department has the highest median salary?",
        constraints="Take the median salary of each department's employees.",
        format='@department[name] where "name" is the department as written in the data.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
name = df.groupby("department")["salary"].median().idxmax()
final_answer(f"@department[{name}]")
""",
    ),
    Spec(
        id="employees_hired_since_2020",
        file_name="employees.csv",
        question="How many employees were hired in 2020 or later?",
        constraints="Count the employees whose hire_date is on or after 1 January 2020.",
        format='@hired_since_2020[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv", parse_dates=["hire_date"])
count = int((df["hire_date"] >= "2020-01-01").sum())
final_answer(f"@hired_since_2020[{count}]")
""",
    ),
    Spec(
        id="employees_bonus",
        file_name="employees.csv",
        question="What is the mean bonus, and for how many employees is the bonus missing?",
        constraints="Ignore missing bonuses when taking the mean.",
        format=(
            '@mean_bonus[value] @missing_bonus[count] where "value" is the mean bonus, '
            f'{TWO}, and "count" an integer.'
        ),
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
missing = int(df["bonus"].isna().sum())
final_answer(f"@mean_bonus[{df['bonus'].mean():.2f}] @missing_bonus[{missing}]")
""",
    ),
    Spec(
        id="employees_age_salary_corr",
        file_name="employees.csv",
        question="How strongly are age and salary correlated?",
        constraints="Compute the Pearson correlation coefficient over all employees.",
        format=f'@correlation_coefficient[r] where "r" is between -1 and 1, {TWO}.',
        concepts=("Correlation Analysis",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
final_answer(f"@correlation_coefficient[{df['age'].corr(df['salary']):.2f}]")
""",
    ),
    Spec(
        id="employees_remote_engineering",
        file_name="employees.csv",
        question="What percentage of the Engineering department works remotely?",
        constraints='An employee works remotely when remote is "yes".',
        format=f'@remote_percent[value] where "value" is a percentage (0-100), {TWO}.',
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
engineering = df[df["department"] == "Engineering"]
value = (engineering["remote"] == "yes").mean() * 100
final_answer(f"@remote_percent[{value:.2f}]")
""",
    ),
    Spec(
        id="employees_largest_department",
        file_name="employees.csv",
        question="Which department has the most employees, and how many?",
        constraints="Count the employees of each department.",
        format=(
            '@largest_department[name] @headcount[count] where "name" is the department as '
            'written in the data and "count" an integer.'
        ),
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
counts = df["department"].value_counts()
final_answer(f"@largest_department[{counts.idxmax()}] @headcount[{int(counts.max())}]")
""",
    ),
    Spec(
        id="employees_mean_tenure",
        file_name="employees.csv",
        question="What was the employees' mean tenure in years on 1 January 2025?",
        constraints=(
            "Tenure is the number of days from hire_date to 2025-01-01 divided by 365.25."
        ),
        format=f'@mean_tenure_years[value] where "value" is in years, {TWO}.',
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv", parse_dates=["hire_date"])
days = (pd.Timestamp("2025-01-01") - df["hire_date"]).dt.days
final_answer(f"@mean_tenure_years[{(days / 365.25).mean():.2f}]")
""",
    ),
    Spec(
        id="employees_max_hr_salary",
        file_name="employees.csv",
        question="What is the highest salary in the HR department?",
        constraints="Consider only employees whose department is HR.",
        format=f'@max_hr_salary[value] where "value" is a salary, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
value = df.loc[df["department"] == "HR", "salary"].max()
final_answer(f"@max_hr_salary[{value:.2f}]")
""",
    ),
    Spec(
        id="employees_top_performers_salary",
        file_name="employees.csv",
        question="What is the mean salary of the employees rated 5 for performance?",
        constraints="Consider only employees whose performance is 5.",
        format=f'@top_performer_salary[value] where "value" is a mean salary, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
value = df.loc[df["performance"] == 5, "salary"].mean()
final_answer(f"@top_performer_salary[{value:.2f}]")
""",
    ),
    Spec(
        id="employees_above_department_mean",
        file_name="employees.csv",
        question="How many employees earn more than the mean salary of their own department?",
        constraints="Compare each salary with the mean salary of the employee's department.",
        format='@above_department_mean[count] where "count" is an integer.',
        concepts=("Feature Engineering",),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("employees.csv")
department_mean = df.groupby("department")["salary"].transform("mean")
count = int((df["salary"] > department_mean).sum())
final_answer(f"@above_department_mean[{count}]")
""",
    ),
    # -- weather.csv -------------------------------------------------------------------------
    Spec(
        id="weather_madrid_mean_max",
        file_name="weather.csv",
        question="What is the mean daily maximum temperature in Madrid?",
        constraints="Use temp_max of Madrid's rows, over all its days.",
        format=f'@madrid_mean_max[value] where "value" is in degrees Celsius, {TWO}.',
        concepts=("Summary Statistics",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv")
value = df.loc[df["city"] == "Madrid", "temp_max"].mean()
final_answer(f"@madrid_mean_max[{value:.2f}]")
""",
    ),
    Spec(
        id="weather_most_humid_city",
        file_name="weather.csv",
        question="Which city has the highest mean humidity?",
        constraints="Ignore missing humidity readings.",
        format='@most_humid_city[name] where "name" is the city as written in the data.',
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv")
name = df.groupby("city")["humidity"].mean().idxmax()
final_answer(f"@most_humid_city[{name}]")
""",
    ),
    Spec(
        id="weather_oslo_rainy_days",
        file_name="weather.csv",
        question="On how many days did it rain in Oslo?",
        constraints="A day is rainy when its precipitation_mm is greater than 0.",
        format='@oslo_rainy_days[count] where "count" is an integer.',
        concepts=("Data Preprocessing",),
        level="easy",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv")
oslo = df[df["city"] == "Oslo"]
count = int((oslo["precipitation_mm"] > 0).sum())
final_answer(f"@oslo_rainy_days[{count}]")
""",
    ),
    Spec(
        id="weather_cairo_hottest_month",
        file_name="weather.csv",
        question="In which month was Cairo's mean daily maximum temperature highest?",
        constraints="Group Cairo's days by the calendar month of their date.",
        format='@hottest_month[month] where "month" is the month\'s number (1-12).',
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv", parse_dates=["date"])
cairo = df[df["city"] == "Cairo"]
month = int(cairo.groupby(cairo["date"].dt.month)["temp_max"].mean().idxmax())
final_answer(f"@hottest_month[{month}]")
""",
    ),
    Spec(
        id="weather_humidity_rain_corr",
        file_name="weather.csv",
        question="How strongly are humidity and precipitation correlated?",
        constraints=(
            "Compute the Pearson correlation coefficient over all rows of all cities, "
            "leaving out rows whose humidity is missing."
        ),
        format=f'@correlation_coefficient[r] where "r" is between -1 and 1, {TWO}.',
        concepts=("Correlation Analysis", "Data Preprocessing"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv").dropna(subset=["humidity"])
r = df["humidity"].corr(df["precipitation_mm"])
final_answer(f"@correlation_coefficient[{r:.2f}]")
""",
    ),
    Spec(
        id="weather_oslo_march_rain",
        file_name="weather.csv",
        question="How much precipitation fell in Oslo in March 2024?",
        constraints="Sum precipitation_mm over Oslo's days from 1 to 31 March 2024.",
        format=f'@oslo_march_precipitation[total] where "total" is in millimetres, {TWO}.',
        concepts=("Data Preprocessing", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv", parse_dates=["date"])
march = df[(df["city"] == "Oslo") & (df["date"].dt.month == 3)]
final_answer(f"@oslo_march_precipitation[{march['precipitation_mm'].sum():.2f}]")
""",
    ),
    Spec(
        id="weather_oslo_wettest_day",
        file_name="weather.csv",
        question="On which day did the most rain fall in Oslo, and how much?",
        constraints="Look at precipitation_mm of Oslo's days.",
        format=(
            '@wettest_day[date] @wettest_day_precipitation[amount] where "date" is written '
            f'YYYY-MM-DD and "amount" is in millimetres, {TWO}.'
        ),
        concepts=("Summary Statistics",),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv")
oslo = df[df["city"] == "Oslo"]
wettest = oslo.loc[oslo["precipitation_mm"].idxmax()]
final_answer(
    f"@wettest_day[{wettest['date']}] "
    f"@wettest_day_precipitation[{wettest['precipitation_mm']:.2f}]"
)
""",
    ),
    Spec(
        id="weather_wind_rain_dry",
        file_name="weather.csv",
        question="What is the mean wind speed on rainy days and on dry days?",
        constraints=(
            "Use every row of every city; a row is rainy when precipitation_mm is greater "
            "than 0, dry otherwise."
        ),
        format=(
            f'@rainy_mean_wind[value] @dry_mean_wind[value] where each "value" is in km/h, {TWO}.'
        ),
        concepts=("Feature Engineering", "Summary Statistics"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv")
rainy = df["precipitation_mm"] > 0
final_answer(
    f"@rainy_mean_wind[{df.loc[rainy, 'wind_kmh'].mean():.2f}] "
    f"@dry_mean_wind[{df.loc[~rainy, 'wind_kmh'].mean():.2f}]"
)
""",
    ),
    Spec(
        id="weather_madrid_warmer_days",
        file_name="weather.csv",
        question="On how many days was Madrid's maximum temperature more than 15 degrees "
        "above Oslo's?",
        constraints="Compare the temp_max of the two cities on the same date.",
        format='@madrid_much_warmer_days[count] where "count" is an integer.',
        concepts=("Feature Engineering", "Data Preprocessing"),
        level="hard",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv")
wide = df.pivot(index="date", columns="city", values="temp_max")
count = int((wide["Madrid"] - wide["Oslo"] > 15).sum())
final_answer(f"@madrid_much_warmer_days[{count}]")
""",
    ),
    Spec(
        id="weather_february_median_min",
        file_name="weather.csv",
        question="What was the median daily minimum temperature in February 2024, over all "
        "three cities?",
        constraints="Take the median of temp_min over every city's February days.",
        format=f'@february_median_min[value] where "value" is in degrees Celsius, {TWO}.',
        concepts=("Summary Statistics", "Data Preprocessing"),
        level="medium",
        solution="""
import pandas as pd
df = pd.read_csv("weather.csv", parse_dates=["date"])
february = df[df["date"].dt.month == 2]
final_answer(f"@february_median_min[{february['temp_min'].median():.2f}]")
""",
    ),
)
