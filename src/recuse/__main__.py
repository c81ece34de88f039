import sys

from recuse._program import main

sys.exit(main())
