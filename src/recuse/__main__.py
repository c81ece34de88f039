import sys

from recuse.cli import main

sys.exit(main())
