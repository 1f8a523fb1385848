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

/** An amount in its currency, as the server writes it (Intl.NumberFormat). */
function money(value, currency) {
  if (currency) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
    } catch {
      // Not a code Intl knows: the number and the code as sent.
    }
  }
  const n = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(value);
  return currency ? `${n} ${currency}` : `${n} (no currency)`;
}

function drawOverview() {
  const data = document.getElementById('overview-data');
  if (!data || typeof Chart === 'undefined') return;
  const { labels, interval, events, revenue } = JSON.parse(data.textContent);
  const x = labels.map((l) => (interval === 'day' ? l.slice(0, 10) : hourLabel(l)));
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
      // One line per currency: amounts in different currencies are never added.
      datasets: revenue.map((series, i) => ({
        label: series.currency || 'No currency',
        data: series.data,
        borderColor: PALETTE[(i + 2) % PALETTE.length],
        backgroundColor: PALETTE[(i + 2) % PALETTE.length],
        tension: 0.2,
        // Hundreds of hours: a dot on each would hide the line.
        pointRadius: series.data.length > 48 ? 0 : 2,
      })),
    },
    options: {
      ...common,
      plugins: {
        ...common.plugins,
        tooltip: {
          callbacks: {
            label: (item) => money(item.parsed.y, revenue[item.datasetIndex].currency),
          },
        },
      },
      scales: { y: { beginAtZero: true } },
    },
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
      cell(record.value === null ? '—' : money(record.value, record.currency), 'num'),
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
    labelRow(rows.closest('table'), tr);
    while (rows.rows.length > 200) rows.deleteRow(-1);
  });
}

/**
 * Every table reads as a list on a phone (the stylesheet's `table.stack`): tables the server
 * did not label get each cell's column name here, and rows the live tail adds get theirs too.
 */
function labelRow(table, row) {
  const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
  [...row.cells].forEach((td, i) => {
    if (!td.dataset.label && names[i]) td.dataset.label = names[i];
  });
}

function stackTables() {
  for (const table of document.querySelectorAll('main table')) {
    if (!table.tHead) continue;
    table.classList.add('stack');
    for (const row of table.tBodies[0]?.rows ?? []) labelRow(table, row);
  }
}

/** The copy buttons: shown only here, where they can work; each says when it has copied. */
function copyButtons() {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const target = document.getElementById(button.dataset.copy);
    if (!target || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      const status = button.nextElementSibling;
      try {
        await navigator.clipboard.writeText('value' in target ? target.value : target.textContent);
        if (status) status.textContent = 'Copied.';
      } catch {
        if (status) status.textContent = 'Could not copy: select the text and copy it.';
      }
    });
  }
}

/** The period pickers: the custom dates only when "Custom dates" is chosen. */
function customPeriods() {
  for (const select of document.querySelectorAll('select[data-custom-period]')) {
    const form = select.form;
    const sync = () => {
      for (const field of form.querySelectorAll('.custom-date')) {
        field.hidden = select.value !== 'custom';
      }
    };
    select.addEventListener('change', sync);
    sync();
  }
}

document.addEventListener('DOMContentLoaded', () => {
  drawOverview();
  followTail();
  copyButtons();
  customPeriods();
  stackTables();
});
