/**
 * Server-rendered SVG charts: plain markup, no script. The view box is phone-sized (360 units
 * wide) and the SVG scales to its container, so labels stay legible from a phone to a desktop.
 * Every chart carries a title and a description, and every bar a tooltip with its exact figures.
 */
import type { VNode } from "preact";
import { must } from "../../core/must.ts";

const WIDTH = 360;
const HEIGHT = 190;
const LEFT = 44;
const RIGHT = 8;
const TOP = 14;
const BOTTOM = 22;
const FONT = 11;
/** Bar colours by role. */
export const COLORS = { main: "#2563eb", bad: "#dc2626", limit: "#d97706", grid: "#d1d5db" };

/** One bar: its label (for the tooltip) and its stacked values, bottom first. */
interface Bar {
  label: string;
  values: number[];
}

/** A stacked bar chart with an optional limit line. */
export function BarChart(
  props: {
    id: string;
    title: string;
    description: string;
    bars: Bar[];
    series: Array<{ name: string; color: string }>;
    limit?: { value: number; label: string };
    /** Labels under the x axis, by bar index. */
    ticks: Array<{ index: number; label: string }>;
  },
): VNode {
  const { bars, limit } = props;
  const highest = Math.max(0, ...bars.map((b) => sum(b.values)));
  const top = limit ? Math.max(limit.value, highest) : niceCeiling(highest);
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  const step = plotW / Math.max(1, bars.length);
  const barW = Math.max(1, step * 0.8);
  /** A bar's `s`-th value belongs to the `s`-th series; a bar with more values is a caller bug. */
  const seriesOf = (s: number) => must(props.series[s], `chart series ${s} of ${props.id}`);
  return (
    <figure class="chart" data-testid={props.id}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${props.id}-title ${props.id}-desc`}
        font-size={FONT}
        font-family="system-ui, sans-serif"
      >
        <title id={`${props.id}-title`}>{props.title}</title>
        <desc id={`${props.id}-desc`}>{props.description}</desc>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line
              x1={LEFT}
              x2={WIDTH - RIGHT}
              y1={y(top * f)}
              y2={y(top * f)}
              stroke={COLORS.grid}
            />
            <text x={LEFT - 4} y={y(top * f) + 4} text-anchor="end" fill="#4b5563">
              {compact(top * f)}
            </text>
          </g>
        ))}
        {bars.map((bar, i) => {
          let base = 0;
          return (
            <g key={i}>
              <title>
                {`${bar.label}: ${bar.values.map((v, s) => `${v} ${seriesOf(s).name}`).join(", ")}`}
              </title>
              {bar.values.map((v, s) => {
                const rect = (
                  <rect
                    key={s}
                    x={LEFT + i * step + (step - barW) / 2}
                    y={y(base + v)}
                    width={barW}
                    height={Math.max(0, y(base) - y(base + v))}
                    fill={seriesOf(s).color}
                  />
                );
                base += v;
                return rect;
              })}
            </g>
          );
        })}
        {limit && (
          <g>
            <line
              x1={LEFT}
              x2={WIDTH - RIGHT}
              y1={y(limit.value)}
              y2={y(limit.value)}
              stroke={COLORS.limit}
              stroke-width={1.5}
              stroke-dasharray="5 3"
            />
            <text x={WIDTH - RIGHT} y={y(limit.value) - 3} text-anchor="end" fill={COLORS.limit}>
              {limit.label}
            </text>
          </g>
        )}
        {props.ticks.map((t) => (
          <text
            key={t.index}
            x={LEFT + t.index * step + step / 2}
            y={HEIGHT - 6}
            text-anchor="middle"
            fill="#4b5563"
          >
            {t.label}
          </text>
        ))}
      </svg>
      <figcaption class="legend">
        {props.series.map((s) => (
          <span key={s.name}>
            <svg viewBox="0 0 10 10" width="10" height="10" aria-hidden="true">
              <rect width="10" height="10" fill={s.color} />
            </svg>{" "}
            {s.name}
          </span>
        ))}
        {limit && <span class="limit">- - {limit.label}</span>}
      </figcaption>
    </figure>
  );
}

/** A horizontal meter of `value` against `max`; amber from 80 %, red at the limit. */
export function Meter(
  props: { id: string; label: string; value: number; max: number; text: string },
): VNode {
  const fraction = props.max > 0 ? Math.min(1, props.value / props.max) : 0;
  const color = fraction >= 1 ? COLORS.bad : fraction >= 0.8 ? COLORS.limit : COLORS.main;
  return (
    <div class="meter" data-testid={props.id}>
      <div class="meter-label">
        <span>{props.label}</span>
        <span data-testid={`${props.id}-text`}>{props.text}</span>
      </div>
      <svg
        viewBox="0 0 100 6"
        preserveAspectRatio="none"
        role="img"
        aria-label={`${props.label}: ${props.text}`}
      >
        <rect width="100" height="6" rx="3" fill="#e5e7eb" />
        <rect
          width={Math.max(fraction > 0 ? 1 : 0, fraction * 100)}
          height="6"
          rx="3"
          fill={color}
        />
      </svg>
    </div>
  );
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** The smallest of 2, 5, 10, 20, 25, 50, 100... at least `value`, so half-way ticks are whole. */
function niceCeiling(value: number): number {
  if (value <= 2) return 2;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((n) => n >= value && n % 2 === 0) ??
    10 * power;
}

function compact(value: number): string {
  if (value >= 10_000) return `${Math.round(value / 1000)}k`;
  if (value >= 1000) return `${(value / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return String(Math.round(value));
}
