import sys

from workers.bench.cli import main

sys.exit(main())
