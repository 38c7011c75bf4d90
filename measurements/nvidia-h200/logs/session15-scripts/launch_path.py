import json, statistics as st
from cuda_bench import report
recs=[json.loads(l) for l in open('results/nvidia-h200/overhead.jsonl')]
recs=[r for r in recs if r['settings'].get('state')=='fast' and r['commit'].startswith('cb56ab9f9')]
sub=[json.load(open(f'measurements/nvidia-h200/overhead-cb56ab9f9-s15-call1-subset-{l}/overhead.json')) for l in ('idle','memory','cpu')]
allr=recs+sub
names=[c['name'] for c in sub[0]['cases']]
launch=[n for n in names if 'time_launch(' in n and "'none'" not in n]
other=[n for n in names if 'time_launch(' not in n]
med={n: st.median([ {c['name']:c for c in r['cases']}[n]['ratio'] for r in recs]) for n in names}
medc={n: st.median([ {c['name']:c for c in r['cases']}[n]['cpp_ns'] for r in recs]) for n in names}
medp={n: st.median([ {c['name']:c for c in r['cases']}[n]['py_ns'] for r in recs]) for n in names}
xs=[];ys=[]
for r in allr:
    cs={c['name']:c for c in r['cases']}
    lr=st.median(cs[n]['ratio']/med[n] for n in launch)
    lc=st.median(cs[n]['cpp_ns']/medc[n] for n in launch)
    lp=st.median(cs[n]['py_ns']/medp[n] for n in launch)
    oc=st.median(cs[n]['cpp_ns']/medc[n] for n in other)
    op=st.median(cs[n]['py_ns']/medp[n] for n in other)
    lab=report.run_label(r)[-14:]
    print(lab.ljust(14), f"launch ratio {lr:.3f}  launch C++ {lc:.3f} py {lp:.3f} | other C++ {oc:.3f} py {op:.3f} | launchC++/otherC++ {lc/oc:.3f}  launchPy/otherPy {lp/op:.3f}")
    if r in recs: xs.append(lc/oc); ys.append(lr)
print(st.correlation(xs,ys))
from statistics import linear_regression
sl, ic = linear_regression(xs, ys)
print(f"fit over {len(xs)} runs: launch ratio shift = {ic:.3f} + {sl:.3f} * launch-path factor")
res=[y-(ic+sl*x) for x,y in zip(xs,ys)]
print("residuals max abs", max(map(abs,res)), "sd", st.pstdev(res))
