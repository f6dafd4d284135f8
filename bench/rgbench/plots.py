# SPDX-License-Identifier: LGPL-2.1-or-later
"""PNG plots of a results dict (matplotlib, Agg backend: no display)."""

import os

from . import CONTENDERS

COLORS = {'floor': '#7f7f7f', 'per-run': '#d62728', 'pooled': '#1f77b4',
          'resident': '#9467bd', 'library': '#2ca02c',
          'library-resident': '#ff7f0e'}


def pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def durations_ms(scenario, contender):
    table = scenario['samples'][contender]
    i = table['columns'].index('dur_ns')
    return sorted(row[i] / 1e6 for row in table['rows'])


def plot_spaced(plt, scenario, path):
    from matplotlib.ticker import ScalarFormatter
    fig, (cdf, hist) = plt.subplots(1, 2, figsize=(11, 4.2))
    data = {c: durations_ms(scenario, c) for c in CONTENDERS}
    everything = [v for d in data.values() for v in d]
    top = max(everything) if everything else 1.0
    bins = [top * i / 80 for i in range(81)]   # the same for all
    for c, d in data.items():
        if not d:
            continue
        y = [(i + 1) / len(d) for i in range(len(d))]
        cdf.step(d, y, where='post', label=c, color=COLORS[c])
        hist.hist(d, bins=bins, alpha=0.55, label=c, color=COLORS[c])
    cdf.set_xscale('log')
    cdf.set_xlabel('per-call duration (ms, log scale)')
    cdf.set_ylabel('fraction of calls')
    cdf.set_title('spaced: CDF')
    cdf.grid(True, which='both', alpha=0.3)
    cdf.legend()
    hist.set_yscale('log')
    hist.yaxis.set_major_formatter(ScalarFormatter())
    hist.set_xlabel('per-call duration (ms)')
    hist.set_ylabel('calls')
    hist.set_title('spaced: histogram')
    hist.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_backtoback(plt, scenarios, path):
    names = [n for n in ('backtoback-1', 'backtoback-2') if n in scenarios]
    fig, ax = plt.subplots(figsize=(9, 4.6))
    width = 0.8 / len(CONTENDERS)
    for k, c in enumerate(CONTENDERS):
        med, lo, hi = [], [], []
        for n in names:
            r = scenarios[n]['contenders'][c]['runs_per_s']
            med.append(r['median'] or 0)
            lo.append((r['median'] or 0) - (r['min'] or 0))
            hi.append((r['max'] or 0) - (r['median'] or 0))
        xs = [i + (k - (len(CONTENDERS) - 1) / 2) * width
              for i in range(len(names))]
        bars = ax.bar(xs, med, width, yerr=[lo, hi], capsize=3, label=c,
                      color=COLORS[c])
        ax.bar_label(bars, fmt='%.0f', fontsize=7, padding=2)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_yscale('log')
    ax.set_ylabel('runs/s (median over blocks; bars: min-max)')
    ax.set_title('trivial program back-to-back')
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fidelity_diffs_ms(scenario, contender, clock):
    table = scenario['samples'][contender]
    rep = table['columns'].index('reported_%s_ns' % clock)
    act = table['columns'].index('actual_%s_ns' % clock)
    return [(row[rep] - row[act]) / 1e6 for row in table['rows']]


def plot_fidelity(plt, scenarios, path):
    names = [n for n in ('fidelity-cpu', 'fidelity-sleep') if n in scenarios]
    fig, axes = plt.subplots(len(names), 2, figsize=(13, 3.8 * len(names)),
                             squeeze=False)
    for row, n in enumerate(names):
        for col, clock in enumerate(('wall', 'cpu')):
            ax = axes[row][col]
            data = [fidelity_diffs_ms(scenarios[n], c, clock)
                    for c in CONTENDERS]
            ax.boxplot([d or [0] for d in data], labels=CONTENDERS,
                       showfliers=True)
            ax.tick_params(axis='x', labelsize=8)
            ax.axhline(0, color='black', linewidth=0.6)
            ax.set_title('%s: %s time' % (n, clock))
            ax.set_ylabel('reported - actual (ms)')
            ax.grid(True, axis='y', alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def make_plots(results, outdir):
    """Write the plots of the scenarios that were run; return file names."""
    plt = pyplot()
    scenarios = results['scenarios']
    made = []
    if 'spaced' in scenarios:
        plot_spaced(plt, scenarios['spaced'],
                    os.path.join(outdir, 'spaced.png'))
        made.append('spaced.png')
    if any(n in scenarios for n in ('backtoback-1', 'backtoback-2')):
        plot_backtoback(plt, scenarios, os.path.join(outdir, 'backtoback.png'))
        made.append('backtoback.png')
    if any(n in scenarios for n in ('fidelity-cpu', 'fidelity-sleep')):
        plot_fidelity(plt, scenarios, os.path.join(outdir, 'fidelity.png'))
        made.append('fidelity.png')
    return made
