import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

/**
 * Events per hour as a bar chart. Its own module so PlanAndQuota can load it lazily: recharts and its
 * dependencies are about half of the renderer's JavaScript, and only this card uses them.
 */
export default function HourlyChart({ data }: { data: { hour: string; events: number }[] }) {
  return (
    <ResponsiveContainer width="100%" height={180}>
      <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
        <CartesianGrid strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="hour" tick={{ fontSize: 11 }} interval={2} />
        <YAxis allowDecimals={false} tick={{ fontSize: 11 }} />
        <Tooltip />
        <Bar dataKey="events" fill="var(--accent)" isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  );
}
