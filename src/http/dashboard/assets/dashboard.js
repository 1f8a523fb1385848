// Trackway dashboard page script: the overview's charts (Chart.js) and the live tail
// (EventSource). Everything else is plain HTML forms, so the pages work without it.

const PALETTE = [
  '#0b5cad',
  '#c2410c',
  '#15803d',
  '#7e22ce',
  '#b91c1c',
  '#0e7490',
  '#a16207',
  '#475569',
];

function hourLabel(iso) {
  return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

function drawOverview() {
  const data = document.getElementById('overview-data');
  if (!data || typeof Chart === 'undefined') return;
  const { labels, events, revenue } = JSON.parse(data.textContent);
  const x = labels.map(hourLabel);
  const common = {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    plugins: { legend: { position: 'bottom' } },
  };
  new Chart(document.getElementById('events-chart'), {
    type: 'bar',
    data: {
      labels: x,
      datasets: events.map((series, i) => ({
        label: series.name,
        data: series.data,
        backgroundColor: PALETTE[i % PALETTE.length],
      })),
    },
    options: {
      ...common,
      scales: {
        x: { stacked: true },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
      },
    },
  });
  new Chart(document.getElementById('revenue-chart'), {
    type: 'line',
    data: {
      labels: x,
      datasets: [
        {
          label: 'Revenue',
          data: revenue,
          borderColor: '#15803d',
          backgroundColor: '#15803d',
          tension: 0.2,
        },
      ],
    },
    options: { ...common, scales: { y: { beginAtZero: true } } },
  });
}

function cell(text, className) {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function followTail() {
  const status = document.getElementById('tail-status');
  const rows = document.getElementById('tail-rows');
  if (!status || !rows) return;
  const source = new EventSource(status.dataset.stream);
  source.addEventListener('open', () => {
    status.textContent = 'Live: new events appear below as they are stored.';
  });
  source.addEventListener('error', () => {
    status.textContent = 'Disconnected; reconnecting…';
  });
  source.addEventListener('event', (message) => {
    const record = JSON.parse(message.data);
    const tr = document.createElement('tr');
    tr.dataset.eventId = record.event_id;
    tr.append(
      cell(`${record.received_at.slice(0, 10)} ${record.received_at.slice(11, 19)} UTC`),
      cell(record.event_name),
      cell(record.event_id),
      cell(record.value === null ? '—' : `${record.value} ${record.currency ?? ''}`, 'num'),
    );
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    summary.textContent = 'View record';
    const pre = document.createElement('pre');
    pre.className = 'record';
    pre.textContent = JSON.stringify(record, null, 2);
    details.append(summary, pre);
    const td = document.createElement('td');
    td.append(details);
    tr.append(td);
    rows.prepend(tr);
    while (rows.rows.length > 200) rows.deleteRow(-1);
  });
}

document.addEventListener('DOMContentLoaded', () => {
  drawOverview();
  followTail();
});
