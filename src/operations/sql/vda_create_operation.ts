/**
 * An operation created in one statement: unless an identical operation is active, its consumption
 * charged (`vda_consume`) and, if the charge fits, the operation inserted with its module rows.
 *
 * One statement, so one round trip and one commit. The charge locks the account's counters until
 * the commit: as a transaction of several round trips, every creation of an account waited for
 * the previous one's COMMIT to come from the service, and an account's creations went one per
 * round trip of a busy service.
 *
 * With a reuse lock (`p_reuse_lock`, the reuse key's text), identical requests queue on it in
 * every process, and the active operation is read after it is taken (each PL/pgSQL statement
 * takes a fresh snapshot): the second of two identical requests reuses the first's operation,
 * charged nothing. Reuse is decided before the quota. A refused charge changes nothing, and
 * nothing is inserted. An insert that still meets an identical active operation fails the
 * statement, its charge undone.
 *
 * The answer: one row naming the active operation (`active_id`), or `vda_consume`'s rows.
 */
import { consumeArguments } from "../../metering/sql/vda_consume.js"
import { callByName } from "../../metering/sql/vda_admit_charge_in_order.js"
import { ACTIVE_SQL } from "./operationRow.js"
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

export default `create or replace function vda_create_operation(
  p_reuse_lock text,
  p_id text,
  p_operation_account text,
  p_operation_environment text,
  p_kind text,
  p_api_version text,
  p_plate text,
  p_modules_key text,
  p_input jsonb,
  p_modules text[],
  p_created_at timestamptz,
  ${consumeArguments.join(",\n  ")}
) returns table (active_id text, charge integer, item_ok boolean, failed boolean, used integer, charged integer)
language plpgsql
${KEYED_LOOKUP_PLANS} as $fn$
#variable_conflict use_column
declare
  twin text;
  d_charge integer[];
  d_ok boolean[];
  d_failed boolean[];
  d_used integer[];
  d_charged integer[];
begin
  if p_reuse_lock is not null then
    perform pg_advisory_xact_lock(hashtextextended(p_reuse_lock, 0));
    -- each kind's predicate as its partial unique index states it, so that the plan uses it
    if p_kind = 'modules' then
      select o.id into twin from operations o
      where o.kind = 'modules' and o.status in ${ACTIVE_SQL} and o.account_id = p_operation_account
        and o.environment = p_operation_environment and o.api_version = p_api_version and o.plate = p_plate
        and o.modules_key = p_modules_key;
    elsif p_kind = 'report' then
      select o.id into twin from operations o
      where o.kind = 'report' and o.status in ${ACTIVE_SQL} and o.account_id = p_operation_account
        and o.environment = p_operation_environment and o.plate = p_plate;
    else
      raise exception 'operations of kind % are not reused', p_kind;
    end if;
    if twin is not null then
      return query select twin, null::integer, null::boolean, null::boolean, null::integer, null::integer;
      return;
    end if;
  end if;

  select array_agg(c.charge order by c.charge), array_agg(c.item_ok order by c.charge), array_agg(c.failed order by c.charge),
    array_agg(c.used order by c.charge), array_agg(c.charged order by c.charge)
  into d_charge, d_ok, d_failed, d_used, d_charged
  from ${callByName("vda_consume", [...consumeArguments, "false"])} as c;

  if d_ok is null or true = all(d_ok) then
    insert into operations (id, account_id, environment, kind, api_version, plate, modules_key, status, input, created_at, updated_at)
    values (p_id, p_operation_account, p_operation_environment, p_kind, p_api_version, p_plate, p_modules_key, 'queued', p_input, p_created_at, p_created_at)
    on conflict do nothing;
    if not found then
      raise exception 'operation % met an identical active operation', p_id;
    end if;
    if p_modules is not null then
      insert into operation_modules (operation_id, module, status, updated_at)
      select p_id, m.module, 'queued', p_created_at from unnest(p_modules) as m(module);
    end if;
  end if;

  return query select null::text, d.* from unnest(d_charge, d_ok, d_failed, d_used, d_charged) as d;
end $fn$
`
