-- TSBS cpu-only table, matching the column order written by tsbs-gen.
-- No trailing semicolon: the caller appends the access method, e.g. `USING columnar;`
-- (psql -f cpu.sql also works as is and creates a heap table).
CREATE TABLE cpu (
    time                timestamptz      NOT NULL,
    hostname            text,
    region              text,
    datacenter          text,
    rack                text,
    os                  text,
    arch                text,
    team                text,
    service             text,
    service_version     text,
    service_environment text,
    usage_user          double precision,
    usage_system        double precision,
    usage_idle          double precision,
    usage_nice          double precision,
    usage_iowait        double precision,
    usage_irq           double precision,
    usage_softirq       double precision,
    usage_steal         double precision,
    usage_guest         double precision,
    usage_guest_nice    double precision
)
