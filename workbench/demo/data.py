"""Deterministic, realistic demo rows: helpdesk cases and invoice lines from a supplier import."""

from __future__ import annotations

import datetime as dt
import decimal
import random
from collections.abc import Iterator
from typing import Any

from workbench.demo import invoices

_FIRST = [
    "Anna",
    "Ben",
    "Chiara",
    "David",
    "Elif",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kasia",
    "Luca",
    "Maya",
    "Noah",
    "Olga",
    "Pavel",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wim",
    "Yara",
    "Zoe",
]
_LAST = [
    "Andersen",
    "Bauer",
    "Costa",
    "Dubois",
    "Eriksen",
    "Fischer",
    "García",
    "Horvat",
    "Ivanova",
    "Jansen",
    "Kowalski",
    "Lambert",
    "Moreau",
    "Novak",
    "Olsen",
    "Petrov",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Weber",
]
_COMPANIES = [
    "Northwind Traders",
    "Contoso Ltd",
    "Fabrikam Inc",
    "Tailspin Toys",
    "Wide World Importers",
    "Adventure Works",
    "Litware",
    "Proseware",
    "Lucerne Publishing",
    "Margie's Travel",
    "Trey Research",
    "Woodgrove Bank",
    "Alpine Ski House",
    "Coho Winery",
    "Fourth Coffee",
]

_CASES = {
    "Hardware": [
        (
            "Laptop does not start after update",
            ("The laptop shows the logo and then a black screen. Tried holding the power button for 30 seconds."),
        ),
        (
            "Docking station: external monitors stay black",
            ("Both monitors say 'no signal' since this morning; the dock's LED is on."),
        ),
        ("Keyboard keys stuck", "Several keys (E, R, T) need hard presses; coffee may have been involved."),
        ("Battery drains within an hour", "Battery health shows 41 %. Device is 3 years old."),
    ],
    "Software": [
        (
            "Excel crashes when opening the budget file",
            ("Excel closes without a message as soon as the shared budget workbook opens. Other files are fine."),
        ),
        ("Need a licence for the PDF editor", "New colleague in accounting needs to edit and sign PDFs."),
        (
            "ERP client shows error 0x80004005",
            ("The error appears when posting an invoice; a screenshot is attached to the original e-mail."),
        ),
        ("Update stuck at 27 %", "The software centre has shown 27 % for two days."),
    ],
    "Network": [
        (
            "VPN disconnects every few minutes",
            ("Working from home; VPN drops roughly every 5 minutes, the home Wi-Fi itself is stable."),
        ),
        ("No Wi-Fi in meeting room 3", "Laptops see the network but cannot get an address."),
        ("Shared drive S: is very slow", "Opening a folder takes over a minute since Monday."),
    ],
    "Access": [
        (
            "Locked out after password change",
            ("Changed the password yesterday, now the account is locked on every device."),
        ),
        (
            "Access to the HR folder for new team lead",
            ("Please grant read and write access, approved by the head of HR."),
        ),
        ("MFA app lost with old phone", "Got a new phone, the authenticator app did not move over."),
    ],
    "Email": [
        ("Mails to a customer bounce", "Every message to the customer's domain returns 'relay denied'."),
        ("Mailbox full", "Outlook says the mailbox is over its limit and no mail can be sent."),
        ("Shared calendar not visible", "The team calendar disappeared from Outlook for three people."),
    ],
    "Printing": [
        ("Printer on 2nd floor prints blank pages", "Toner was replaced last week; pages come out empty."),
        ("Cannot add the new label printer", "The driver install asks for admin rights."),
    ],
}

_RESOLUTIONS = [
    "Replaced the part and tested with the user.",
    "Reset the profile; user confirmed it works.",
    "Granted access as approved.",
    "Reinstalled the driver and printed a test page.",
    "Cleared cached credentials; account unlocked.",
    "Applied the vendor's hotfix.",
]

_VENDORS = [
    "Acme Office Supplies",
    "Baltic Paper Mills",
    "Cobalt Logistics",
    "Delta Cleaning Services",
    "Evergreen Catering",
    "Fjord Energy",
    "Granite IT Services",
    "Harbor Freight Partners",
    "Iris Telecom",
    "Juniper Facility Management",
]

_CITIES = ["Leeds", "Riga", "Lyon", "Graz", "Porto", "Bergen", "Brno", "Aarhus", "Turku", "Ghent"]


def vendors() -> Iterator[dict[str, Any]]:
    """The vendors the import's lines name, each with a city (told apart in the picker) and a VAT id."""
    for i, name in enumerate(_VENDORS):
        yield {"name": name, "city": _CITIES[i], "vat_id": f"EU{372819400 + 7919 * i}"}


def _name(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def cases(count: int = 400, *, seed: int = 7, now: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
    """Helpdesk cases opened in the three days before `now` (the current time, UTC: the demo is
    always fresh); about two thirds are still to be worked on (status new or open), and about a
    quarter of those are past their due time, as on a busy day."""
    rng = random.Random(seed)
    now = now or dt.datetime.now(dt.UTC).replace(tzinfo=None, second=0, microsecond=0)
    categories = list(_CASES)
    for case_id in range(1, count + 1):
        category = rng.choice(categories)
        subject, description = rng.choice(_CASES[category])
        opened = now - dt.timedelta(minutes=rng.randint(5, 60 * 24 * 3))
        priority = rng.choices([1, 2, 3, 4], weights=[1, 3, 5, 3])[0]
        status = rng.choices(["new", "open", "waiting_customer", "resolved", "closed"], weights=[45, 20, 8, 17, 10])[0]
        person = _name(rng)
        company = rng.choice(_COMPANIES)
        done = status in ("resolved", "closed")
        yield {
            "case_id": case_id,
            "opened_at": opened,
            "customer": f"{person} ({company})",
            "email": f"{person.split()[0].lower()}.{person.split()[1].lower()}@"
            f"{company.split()[0].lower().replace(chr(39), '')}.example",
            "subject": subject,
            "description": description,
            "category": category,
            "priority": priority,
            "status": status,
            "due_at": opened + dt.timedelta(hours={1: 8, 2: 24, 3: 72, 4: 168}[priority]),
            "resolution": rng.choice(_RESOLUTIONS) if done else None,
            "time_spent_min": rng.randint(5, 180) if done else None,
        }


def imports(count: int = 300, *, seed: int = 11) -> Iterator[dict[str, Any]]:
    """Invoice lines from supplier CSV imports; most wait for a clerk to verify them."""
    rng = random.Random(seed)
    row_id = 0
    batch_no = 0
    while row_id < count:
        batch_no += 1
        vendor = rng.choice(_VENDORS)
        batch = f"2026-11-{batch_no:02d}-{vendor.split()[0].upper()}"
        for line in range(1, rng.randint(8, 30) + 1):
            row_id += 1
            if row_id > count:
                return
            amount = decimal.Decimal(rng.randint(1500, 950000)) / 100
            status = rng.choices(["pending", "verified", "rejected"], weights=[80, 15, 5])[0]
            checked = status != "pending"
            invoice_no = f"INV-{rng.randint(10000, 99999)}"
            yield {
                "row_id": row_id,
                "batch": batch,
                "source_file": f"imports/{batch.lower()}.csv",
                "scan": invoices.scan_path({"invoice_no": invoice_no, "row_id": row_id}),
                "line_no": line,
                "vendor": vendor,
                "invoice_no": invoice_no,
                "invoice_date": dt.date(2026, 10, 1) + dt.timedelta(days=rng.randint(0, 50)),
                "amount": amount,
                "currency": rng.choices(["EUR", "USD", "GBP", "SEK"], weights=[70, 15, 10, 5])[0],
                "vat_rate": decimal.Decimal(rng.choice(["0.00", "7.00", "19.00", "25.00"])),
                # Some lines carry typical import errors for the clerk to catch.
                "iban": None if rng.random() < 0.08 else f"DE{rng.randint(10, 99)}{rng.randint(10**17, 10**18 - 1)}",
                "paid": False,
                "check_status": status,
                "checker_note": "Amount matches the PDF."
                if status == "verified"
                else ("Duplicate of an earlier line." if status == "rejected" else None),
                "checked_by": "mkowalski" if checked else None,
                "checked_at": dt.datetime(2026, 11, 19, 15, 0) if checked else None,
            }
