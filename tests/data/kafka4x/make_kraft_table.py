"""Write ``kseg/decoders/schemas/releases/kraft-<line>.json``: which KRaft record types, versions and tagged fields
the metadata classes of Kafka release ``<line>`` know, read from ``apache/kafka``'s specs on that branch::

    python tests/data/kafka4x/make_kraft_table.py 3.6 <apache-kafka-git-dir> > kseg/decoders/schemas/releases/kraft-3.6.json
"""
import json, re, subprocess, sys
line = sys.argv[1]
repo = sys.argv[2]
commit = subprocess.run(["git", "-C", repo, "rev-parse", line], capture_output=True, text=True).stdout.strip()
d = "metadata/src/main/resources/common/metadata/"
names = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", commit, d], capture_output=True, text=True).stdout.split()
def camel(n): return n[0].lower() + n[1:]
def tagged(struct, fields, out):
    for f in fields:
        if "tag" in f:
            out.append(f"{struct}.{camel(f['name'])}")
        if "fields" in f:
            tagged(f["type"].lstrip("[]"), f["fields"], out)
records = {}
for p in names:
    t = subprocess.run(["git", "-C", repo, "show", f"{commit}:{p}"], capture_output=True, text=True).stdout
    spec = json.loads(re.sub(r"//.*", "", t))
    if spec.get("type") != "metadata":
        continue
    hi = int(spec["validVersions"].split("-")[-1])
    out = []
    tagged(spec["name"], spec["fields"], out)
    for cs in spec.get("commonStructs", []):
        tagged(cs["name"], cs["fields"], out)
    records[str(spec["apiKey"])] = {"name": spec["name"], "highest": hi, "tagged": sorted(out)}
print(json.dumps({"kafkaLine": line, "kafkaCommit": commit,
                  "source": "metadata/src/main/resources/common/metadata/*.json of apache/kafka",
                  "records": dict(sorted(records.items(), key=lambda kv: int(kv[0])))}, indent=1))
