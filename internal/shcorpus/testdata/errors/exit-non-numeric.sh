exit abc
