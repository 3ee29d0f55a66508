import json
import subprocess
import sys

def test_check_json_runs_without_gpu():
    out = subprocess.run([sys.executable, "-m", "cudadoctor", "check", "--json", "--driver", "550.54.14", "--gpu", "A100"], capture_output=True, text=True)
    data = json.loads(out.stdout)
    assert data["schema"] == 1
