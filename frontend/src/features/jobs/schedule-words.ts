import type { Schedule } from './types';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY_NAMES: Record<string, number> = { SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 };

const two = (n: number) => String(n).padStart(2, '0');
const isInt = (s: string, lo: number, hi: number) => /^\d+$/.test(s) && Number(s) >= lo && Number(s) <= hi;

function day(field: string): number | null {
  const upper = field.toUpperCase();
  if (upper in DAY_NAMES) return DAY_NAMES[upper];
  return isInt(field, 0, 7) ? Number(field) % 7 : null;
}

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${s}`;
}

/** "Every 30 minutes", "Every hour", "Every 2 hours", "Every day" for an interval. */
export function everyInWords(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? 'Every day' : `Every ${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? 'Every hour' : `Every ${minutes / 60} hours`;
  return minutes === 1 ? 'Every minute' : `Every ${minutes} minutes`;
}

/**
 * A cron expression in words where it has a common shape ("Every Monday at 08:00", "Every
 * weekday at 07:30", "Every 15 minutes", "On the 1st of every month at 06:00"), else null.
 */
export function cronInWords(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [min, hour, dom, month, dow] = fields;
  if (month !== '*') return null;
  const step = /^\*\/(\d+)$/.exec(min);
  if (step && hour === '*' && dom === '*' && dow === '*') return everyInWords(Number(step[1]));
  if (!isInt(min, 0, 59)) return null;
  if (hour === '*' && dom === '*' && dow === '*') return `Every hour at :${two(Number(min))}`;
  const hourStep = /^\*\/(\d+)$/.exec(hour);
  if (hourStep && dom === '*' && dow === '*') return `${everyInWords(Number(hourStep[1]) * 60)} at :${two(Number(min))}`;
  if (!isInt(hour, 0, 23)) return null;
  const at = `at ${two(Number(hour))}:${two(Number(min))}`;
  if (dom === '*' && dow === '*') return `Every day ${at}`;
  if (dom === '*') {
    if (dow === '1-5' || dow.toUpperCase() === 'MON-FRI') return `Every weekday ${at}`;
    if (dow === '0,6' || dow === '6,0' || dow.toUpperCase() === 'SAT,SUN') return `Every weekend day ${at}`;
    const days = dow.split(',').map(day);
    if (days.some((d) => d === null)) return null;
    const names = days.map((d) => DAYS[d!]);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
    return `Every ${list} ${at}`;
  }
  if (dow === '*' && isInt(dom, 1, 31)) return `On the ${ordinal(Number(dom))} of every month ${at}`;
  return null;
}

/**
 * A job's schedule as a person says it: "Every Monday at 08:00 Europe/Paris", "Every 30
 * minutes", "On demand" (no schedule); an uncommon cron is shown as itself ("Cron 5 4 * 2 *").
 */
export function scheduleInWords(schedule: Schedule | null | undefined): string {
  if (!schedule) return 'On demand';
  if (schedule.every_minutes != null) return everyInWords(schedule.every_minutes);
  if (!schedule.cron) return 'On demand';
  const zone = schedule.timezone || 'UTC';
  const words = cronInWords(schedule.cron);
  return words ? `${words} ${zone}` : `Cron ${schedule.cron.trim()} (${zone})`;
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "in 3 days", "in 2 hours", "5 minutes ago", "just now": a time relative to `now`. */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const diff = new Date(iso).getTime() - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) return relative.format(Math.round(diff / ms), unit);
  }
  return Math.abs(diff) < 30_000 ? 'just now' : relative.format(Math.round(diff / 1000), 'second');
}

/** "Monday 30 Nov, 08:00 Europe/Paris": a time as the schedule's zone reads it (the browser's own zone when it is unknown). */
export function inZone(iso: string, zone: string | undefined): string {
  const options: Intl.DateTimeFormatOptions = { weekday: 'long', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
  try {
    return `${new Intl.DateTimeFormat('en-GB', { ...options, timeZone: zone || 'UTC' }).format(new Date(iso))} ${zone || 'UTC'}`;
  } catch {
    return new Date(iso).toLocaleString();
  }
}

/** The time zones the browser knows (for the schedule's zone field), the browser's own first. */
export function timeZones(): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [own, ...all.filter((z) => z !== own)];
}
