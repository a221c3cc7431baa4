"""Units the benchmark reports share."""


def mb(n) -> str:
    """Bytes as whole megabytes (10^6), with thousands separators."""
    return f"{int(n) / 1e6:,.0f} MB"
